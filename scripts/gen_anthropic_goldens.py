#!/usr/bin/env python3
"""Goldens for --model anthropic-chat / anthropic-chat-completions: the reference's own
AnthropicChat (lm_eval 0.4.13, lm_eval/models/anthropic_llms.py, a TemplateAPI over the Messages
API) run against a local fake Messages server (an http.server on a free loopback port) with
ANTHROPIC_API_KEY set to a test value, recording each request's body and headers, the fake's
answer, and AnthropicChat's results. The C++ test replays the answers and compares its bodies,
headers and results (and that the key appears nowhere else).

The fake answers {"content": [{"type": "text", "text": "re: " + the last message's text}]}.

Usage (from the repository root, the reference's environment):
    VENV/bin/python scripts/gen_anthropic_goldens.py > tests/models/api/goldens/anthropic_reference.json
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "sk-ant-test-key-0000"
os.environ["ANTHROPIC_API_KEY"] = KEY

from lm_eval.api.instance import Instance  # noqa: E402
from lm_eval.models.anthropic_llms import AnthropicChat  # noqa: E402
from lm_eval.models.api_models import JsonChatStr  # noqa: E402

exchanges = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        last = body["messages"][-1]["content"][0]["text"]
        ans = {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
               "content": [{"type": "text", "text": "re: " + last}], "stop_reason": "end_turn"}
        exchanges.append({"path": self.path, "body": body,
                          "headers": {k: self.headers[k]
                                      for k in ("x-api-key", "anthropic-version")},
                          "answer": ans})
        data = json.dumps(ans).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()

CHATS = [
    [{"role": "user", "content": "Once upon a time"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q: 2+2?"},
     {"role": "assistant", "content": "4"}, {"role": "user", "content": "Q: 3+3?"}],
    [{"role": "user", "content": "Café?"}],
    [{"role": "user", "content": "Tom and"}],
]
GEN_KWARGS = [{"until": ["\n\n"], "max_gen_toks": 5},
              {"until": "Q:", "do_sample": False, "temperature": 0.5},
              {"top_p": 0.9},
              {"until": [" ", ""], "max_gen_toks": 7}]

cases = []
for model_args in [{"model": "claude-3-5-haiku-latest"},
                   {"model": "claude-3-5-haiku-latest", "max_gen_toks": 64,
                    "eos_string": "\n\nHuman:"}]:
    exchanges.clear()
    lm = AnthropicChat(base_url=f"http://127.0.0.1:{server.server_port}/v1/messages",
                       **model_args)
    reqs = [Instance(request_type="generate_until", doc={}, idx=0,
                     arguments=(JsonChatStr(json.dumps(c, ensure_ascii=False)), dict(k)))
            for c, k in zip(CHATS, GEN_KWARGS)]
    results = lm.generate_until(reqs)
    for e in exchanges:
        e["path"] = e["path"]
    cases.append({"model_args": model_args, "results": results, "exchanges": list(exchanges)})

json.dump({"chats": CHATS, "gen_kwargs": GEN_KWARGS, "api_key": KEY, "cases": cases},
          sys.stdout, indent=1, ensure_ascii=False)
print()
server.shutdown()
