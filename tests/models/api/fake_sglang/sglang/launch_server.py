"""A fake of SGLang's server (python -m sglang.launch_server) for lm-eval's tests: GET /v1/models
(its model card with max_model_len, the context length) and /health, POST /generate answered by
fake_outputs as SGLang's native API answers (the Engine.generate dict). It writes its command
line, pid and an engine child's pid to $FAKE_SGLANG_RECORD_DIR/server_<port>.json and each
request body to requests_<port>.jsonl, and, as SGLang does, stops its scheduler process on
SIGTERM. With --api-key K, requests need `Authorization: Bearer K`.
Knobs: FAKE_SGLANG_FAIL (exit 3 at start with an engine error), FAKE_SGLANG_NEVER_READY (never
listen), FAKE_SGLANG_DELAY_S (seconds before each answer)."""
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sglang import fake_outputs

argv = sys.argv[1:]


def opt(name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


port = int(opt("--port", "30000"))
model = opt("--model-path")
record_dir = os.environ.get("FAKE_SGLANG_RECORD_DIR", ".")
print(f"fake SGLang: starting with {argv}", flush=True)
if os.environ.get("FAKE_SGLANG_FAIL"):
    print("launch_server.py: error: unrecognized arguments for the fake engine", flush=True)
    sys.exit(3)
scheduler = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])


def on_term(sig, frame):
    scheduler.kill()
    os._exit(0)


signal.signal(signal.SIGTERM, on_term)
with open(os.path.join(record_dir, f"server_{port}.json"), "w") as f:
    json.dump({"argv": argv, "pid": os.getpid(), "pgid": os.getpgid(0),
               "engine_pid": scheduler.pid}, f)
if os.environ.get("FAKE_SGLANG_NEVER_READY"):
    time.sleep(3600)
context_len = int(opt("--context-length", str(fake_outputs.CONTEXT_LEN)))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/v1/models":
            self.reply(200, {"object": "list", "data": [
                {"id": model, "object": "model", "root": model, "max_model_len": context_len}]})
        elif self.path == "/health":
            self.reply(200, {})
        else:
            self.reply(404, {"error": "not found"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        req = json.loads(self.rfile.read(n))
        key = opt("--api-key")
        if key and self.headers.get("Authorization") != f"Bearer {key}":
            self.reply(401, {"error": "Unauthorized"})
            return
        with open(os.path.join(record_dir, f"requests_{port}.jsonl"), "a") as f:
            f.write(json.dumps(req) + "\n")
        if delay := float(os.environ.get("FAKE_SGLANG_DELAY_S", "0")):
            time.sleep(delay)
        if self.path != "/generate" or not isinstance(req.get("input_ids"), list):
            self.reply(400, {"error": {"message": "bad request"}})
            return
        self.reply(200, fake_outputs.answer(req))


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
