"""A fake of vLLM's OpenAI-compatible server (python -m vllm.entrypoints.openai.api_server) for
lm-eval's tests: GET /v1/models and /health, POST /v1/completions with token-id prompts answered
from fake_engine in vLLM's JSON shapes (choices[].text, choices[].prompt_logprobs as lists of
{token_id: {logprob, rank, decoded_token}} with a null first entry). It writes its command line,
pid and an engine child's pid to $FAKE_VLLM_RECORD_DIR/server_<port>.json and each request body to
requests_<port>.jsonl, and, as vLLM does, stops its engine process on SIGTERM.
With --api-key K, requests need `Authorization: Bearer K` (as vLLM's).
Knobs: FAKE_VLLM_FAIL (exit 3 at start with an engine error), FAKE_VLLM_NEVER_READY (never
listen), FAKE_VLLM_DELAY_S (seconds before each answer)."""
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
import fake_engine  # noqa: E402

argv = sys.argv[1:]


def opt(name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


port = int(opt("--port", "8000"))
model = opt("--model")
record_dir = os.environ.get("FAKE_VLLM_RECORD_DIR", ".")
print(f"fake vLLM: starting with {argv}", flush=True)
if os.environ.get("FAKE_VLLM_FAIL"):
    print("ValueError: fake engine error: unrecognized arguments for the engine", flush=True)
    sys.exit(3)
engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])


def on_term(sig, frame):
    engine.kill()
    os._exit(0)


signal.signal(signal.SIGTERM, on_term)
with open(os.path.join(record_dir, f"server_{port}.json"), "w") as f:
    json.dump({"argv": argv, "pid": os.getpid(), "pgid": os.getpgid(0), "engine_pid": engine.pid,
               "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}, f)
if os.environ.get("FAKE_VLLM_NEVER_READY"):
    time.sleep(3600)
max_model_len = int(opt("--max-model-len", "2048"))
served = "finetuned" if "--enable-lora" in argv else model


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
                {"id": model, "object": "model", "max_model_len": max_model_len}]})
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
        if delay := float(os.environ.get("FAKE_VLLM_DELAY_S", "0")):
            time.sleep(delay)
        if self.path != "/v1/completions" or req.get("model") not in (model, served):
            self.reply(400, {"error": {"message": f"bad request for {req.get('model')}"}})
            return
        ids = req["prompt"]
        choice = {"index": 0, "text": fake_engine.generate(ids, req.get("max_tokens", 16),
                                                           req.get("stop")),
                  "finish_reason": "length"}
        if req.get("prompt_logprobs"):
            choice["prompt_logprobs"] = [
                None if e is None else {str(t): {"logprob": lp, "rank": r, "decoded_token": f"w{t}"}
                                        for t, lp, r in e}
                for e in fake_engine.prompt_logprobs(ids)]
        self.reply(200, {"id": "cmpl-1", "object": "text_completion", "model": req["model"],
                         "choices": [choice]})


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
