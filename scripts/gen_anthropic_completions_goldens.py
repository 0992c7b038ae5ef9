#!/usr/bin/env python3
"""Goldens for --model anthropic-completions: the reference's own AnthropicLM (lm_eval 0.4.13,
lm_eval/models/anthropic_llms.py) over the anthropic SDK 0.38.0 (the last SDKs with
client.completions and client.get_tokenizer(); httpx 0.27), pointed by ANTHROPIC_BASE_URL at a
local fake Text Completions API (an http.server on a free loopback port), with ANTHROPIC_API_KEY
set to a test value. Records each request's path, body and headers, the fake's answer, and
AnthropicLM's results or the exception it raised. The C++ test replays the answers and compares
its bodies, headers and results (and that the key appears nowhere else).

The fake answers {"completion": "re: " + 12 characters of the prompt after "\\n\\nHuman: "}; a prompt containing
a marker word answers with an error status instead (see ERRORS), to record what the SDK's own
retries and AnthropicLM's exception handling make of it.

Usage (from the repository root; VENV has lm-eval==0.4.13 anthropic==0.38.0 httpx==0.27.2):
    VENV/bin/python scripts/gen_anthropic_completions_goldens.py \
        > tests/models/api/goldens/anthropic_completions_reference.json
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "sk-ant-test-completions-key-0000"
os.environ["ANTHROPIC_API_KEY"] = KEY
os.environ.pop("ANTHROPIC_AUTH_TOKEN", None)

import anthropic  # noqa: E402
from lm_eval.api.instance import Instance  # noqa: E402
from lm_eval.models.anthropic_llms import AnthropicLM  # noqa: E402

# The headers compared by the test; the SDK's own (user-agent, x-stainless-*) are listed by name.
HEADERS = ("x-api-key", "anthropic-version", "content-type", "accept", "authorization")

# marker in the prompt -> (status, how many times it answers so before a 200)
ERRORS = {"RATE3": (429, 3), "BAD400": (400, 99), "FAIL500": (500, 99)}

exchanges = []
seen = {}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body.get("prompt", "")
        status, ans = 200, {"type": "completion", "id": "compl_1", "model": body.get("model"),
                            "completion": "re: " + prompt[9:21], "stop_reason": "stop_sequence"}
        for marker, (code, times) in ERRORS.items():
            if marker in prompt:
                seen[marker] = seen.get(marker, 0) + 1
                if seen[marker] <= times:
                    status = code
                    ans = {"type": "error", "error": {"type": "test_error", "message": marker}}
        if "NOCOMPLETION" in prompt:
            ans = {"type": "completion", "id": "compl_2"}
        exchanges.append({
            "path": self.path, "body": body,
            "headers": {k: self.headers.get(k) for k in HEADERS},
            "other_headers": sorted(k.lower() for k in self.headers.keys()
                                    if k.lower() not in HEADERS
                                    and k.lower() not in ("host", "content-length",
                                                          "connection", "accept-encoding")),
            "status": status, "answer": ans})
        data = json.dumps(ans).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 429:
            self.send_header("retry-after", "0.01")  # the SDK waits this long between retries
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
os.environ["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{server.server_port}"


def run(model_args, requests, method="generate_until"):
    exchanges.clear()
    seen.clear()
    out = {"model_args": model_args, "method": method, "requests": requests}
    try:
        lm = AnthropicLM(**model_args)
        insts = [Instance(request_type=method, doc={}, idx=i, arguments=tuple(r))
                 for i, r in enumerate(requests)]
        start = time.time()
        out["results"] = getattr(lm, method)(insts)
        out["seconds"] = round(time.time() - start, 1)
    except Exception as e:  # noqa: BLE001 - recorded as the reference's outcome
        out["error"] = {"type": type(e).__name__, "message": str(e).replace(KEY, "<KEY>")}
    out["exchanges"] = list(exchanges)
    return out


cases = [
    # batch_size is what lm-eval's evaluator always adds (additional_config).
    run({"batch_size": 1},
        [["Once upon a time", {"until": ["\n\n"], "max_gen_toks": 5}],
         ["Q: 2+2?\nA:", {"until": ["Q:", "\n"], "temperature": 0.5, "do_sample": False}],
         ["Café? ü", {"until": []}],
         ["Tom and", {"until": [" ", ""], "max_gen_toks": 7, "top_p": 0.5}]]),
    run({"model": "claude-instant-1.2", "max_tokens_to_sample": 50, "temperature": 0.7,
         "top_k": 5, "top_p": 0.9, "batch_size": 1},
        [["Hello", {"until": ["\n"]}],
         ["Hi", {"until": ["."], "max_gen_toks": 3, "temperature": 0.0}]]),
    run({"metadata": {"user_id": "u1"}}, [["Meta", {"until": ["x"]}]]),
    run({}, [["Empty", {}]]),                      # until None: [HUMAN_PROMPT] + None
    run({}, [["Str", {"until": "Q:"}]]),          # until a string: list + str
    run({"foo": 1}, [["Unknown", {"until": ["x"]}]]),  # an argument create() does not take
    run({}, [["one RATE3", {"until": ["x"]}], ["two", {"until": ["x"]}]]),
    run({}, [["one", {"until": ["x"]}], ["two BAD400", {"until": ["x"]}],
             ["three", {"until": ["x"]}]]),
    run({}, [["FAIL500", {"until": ["x"]}], ["two", {"until": ["x"]}]]),
    run({}, [["NOCOMPLETION", {"until": ["x"]}]]),
    run({}, [["a", "b"]], "loglikelihood"),
    run({}, [["a"]], "loglikelihood_rolling"),
]

lm = AnthropicLM()
facts = {
    "anthropic": anthropic.__version__,
    "HUMAN_PROMPT": anthropic.HUMAN_PROMPT,
    "AI_PROMPT": anthropic.AI_PROMPT,
    "tokenizer": type(lm.tokenizer).__module__ + "." + type(lm.tokenizer).__name__,
    "max_length": lm.max_length,
    "max_gen_toks": lm.max_gen_toks,
    "sdk_max_retries": lm.client.max_retries,
}
json.dump({"api_key": KEY, "facts": facts, "cases": cases}, sys.stdout, indent=1,
          ensure_ascii=False)
print()
server.shutdown()
