#!/usr/bin/env python3
"""Goldens for --model textsynth: the reference's own TextSynthLM (lm_eval 0.4.13,
lm_eval/models/textsynth.py) against a local fake TextSynth API (an http.server on a free
loopback port; TextSynthLM.api_url pointed at it), recording each request's path, body and
Authorization header, the fake's answer and TextSynthLM's results.

TextSynthLM iterates its requests as (context, continuation) / (prompt, gen_kwargs) tuples (the
pre-0.4 Instance-less interface: given 0.4's Instances it fails with a TypeError, which is why
lm-eval's evaluator could never run it); it is driven here with each Instance's args, what an
Instance holds.

The fake answers /logprob with logprob -len(continuation)/4 and is_greedy when the continuation
has fewer than 4 characters, /completions with " w1 w2 w3 w4" cut at the first stop string.

Usage (from the repository root, the reference's environment):
    VENV/bin/python scripts/gen_textsynth_goldens.py > tests/models/api/goldens/textsynth_reference.json
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "ts-test-secret-0000"
os.environ["TEXTSYNTH_API_SECRET_KEY"] = KEY

from lm_eval.models.textsynth import TextSynthLM  # noqa: E402

exchanges = []


def answer(path, body):
    if path.endswith("/logprob"):
        c = body["continuation"]
        return {"logprob": -len(c) / 4, "is_greedy": len(c) < 4, "total_tokens": 3}
    text = " w1 w2 w3 w4"
    stops = body["stop"] if isinstance(body["stop"], list) else [body["stop"]]
    cut = min([text.index(s) for s in stops if s and s in text] + [len(text)])
    return {"text": text[:cut], "reached_end": True}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ans = answer(self.path, body)
        exchanges.append({"path": self.path, "body": body,
                          "authorization": self.headers["Authorization"], "answer": ans})
        data = json.dumps(ans).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
lm = TextSynthLM(engine="gptj_6B")
lm.api_url = f"http://127.0.0.1:{server.server_port}"

LL = [["Once upon a time", " there was"], ["Café", " au lait"], ["Q: 1+1?\nA:", " 2"]]
GEN = [["Once upon a time", {"until": ["w3"], "max_gen_toks": 5}],
       ["Tom and", {"until": "w2", "temperature": 0.5}]]
ll = lm.loglikelihood([tuple(r) for r in LL], disable_tqdm=True)
gen = lm.generate_until([(c, dict(k)) for c, k in GEN], disable_tqdm=True)
json.dump({"api_key": KEY, "engine": "gptj_6B",
           "loglikelihood": {"requests": LL, "results": [[v, g] for v, g in ll]},
           "generate_until": {"requests": GEN, "results": gen}, "exchanges": exchanges},
          sys.stdout, indent=1, ensure_ascii=False)
print()
server.shutdown()
