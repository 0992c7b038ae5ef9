#!/usr/bin/env python3
"""Goldens for --model gguf / ggml: the reference's own GGUFLM (lm_eval 0.4.13,
lm_eval/models/gguf.py) run against a local fake llama.cpp-style server (an http.server on a free
loopback port), recording each request body it posted, the fake's answer to it, and the results
GGUFLM made of them. The C++ test replays the answers to lm-eval's bodies and compares.

The fake tokenizes a prompt into words with their leading spaces (text_offset in code points, as
llama-cpp-python counts them): a word's logprob is -(1 + len(word) % 4) / 4, the best token of its
position is the word itself when its length without spaces is a multiple of 3, else " x" at -0.1;
an answer ends with one generated token " Z" (-2.0, the best: greedy at temperature 0); the first token's logprob is None. A generation
is the words " w1 w2 ... w8" cut at the first stop string, with spaces around.

Usage (from the repository root, the reference's environment):
    VENV/bin/python scripts/gen_gguf_goldens.py > tests/models/api/goldens/gguf_reference.json
"""
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lm_eval.api.instance import Instance
from lm_eval.models.gguf import GGUFLM

exchanges = []


def words(text):
    return [(m.start(), m.group(0)) for m in re.finditer(r"\s*\S+|\s+$", text)]


def logprobs_of(prompt, echo):
    offsets, tokens, lps, tops = [], [], [], []
    if echo:
        for i, (off, w) in enumerate(words(prompt)):
            offsets.append(off)
            tokens.append(w)
            lps.append(None if i == 0 else -(1 + len(w) % 4) / 4)
            best = ({w: lps[-1] or 0.0} if len(w.strip()) % 3 == 0
                    else {" x": -0.1, w: lps[-1] or 0.0})
            tops.append(best)
    offsets.append(len(prompt))
    tokens.append(" Z")
    lps.append(-2.0)
    tops.append({" Z": -2.0, " the": -2.5})
    return {"text_offset": offsets, "tokens": tokens, "token_logprobs": lps, "top_logprobs": tops}


def answer(body):
    if body.get("max_tokens") == 1 or "stop" not in body:
        echo = bool(body.get("echo"))
        text = (body["prompt"] if echo else "") + " Z"
        return {"id": "cmpl-1", "object": "text_completion",
                "choices": [{"index": 0, "text": text, "finish_reason": "length",
                             "logprobs": logprobs_of(body["prompt"], echo)}]}
    text = " " + " ".join(f"w{i}" for i in range(1, 9)) + " \n"
    stops = body["stop"] if isinstance(body["stop"], list) else [body["stop"]]
    cut = min([text.index(s) for s in stops if s and s in text] + [len(text)])
    return {"id": "cmpl-2", "object": "text_completion",
            "choices": [{"index": 0, "text": text[:cut], "finish_reason": "stop"}]}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ans = answer(body)
        exchanges.append({"path": self.path, "body": body, "answer": ans})
        data = json.dumps(ans).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
lm = GGUFLM(base_url=f"http://127.0.0.1:{server.server_port}")


def inst(kind, args):
    return Instance(request_type=kind, doc={}, arguments=args, idx=0)


LL = [["Once upon a time", " there was"], ["The cat", " sat on the mat"],
      ["Café au", " lait"], ["Question: 2+2?\nAnswer:", " 4"], ["Hello there", ""],
      ["abc", " def"]]
GEN = [["Once upon a time", {"until": ["w4"], "max_gen_toks": 5}],
       ["Q: hi\nA:", {"until": "w2"}],
       ["Tom and", {"do_sample": False}],
       ["Lily", {"until": None}]]

ll = lm.loglikelihood([inst("loglikelihood", tuple(a)) for a in LL])
gen = lm.generate_until([inst("generate_until", (c, dict(k))) for c, k in GEN])
for e in exchanges:
    e["body"].pop("_", None)
json.dump({"loglikelihood": {"requests": LL, "results": [[v, g] for v, g in ll]},
           "generate_until": {"requests": GEN, "results": gen},
           "exchanges": exchanges}, sys.stdout, indent=1, ensure_ascii=False)
print()
server.shutdown()
