"""What the fake engine servers lm-eval's tests start share (fake vLLM's
vllm/entrypoints/openai/api_server.py and fake SGLang's sglang/launch_server.py): the command line,
an engine child process stopped on SIGTERM as the real servers stop theirs, the record of the
command line and pids in $<ENV>_RECORD_DIR/server_<port>.json, each request body appended to
requests_<port>.jsonl, `Authorization: Bearer K` required with --api-key K, GET /v1/models and
/health. Knobs: <ENV>_FAIL (exit 3 at start with an engine error), <ENV>_NEVER_READY (never
listen), <ENV>_DELAY_S (seconds before each answer)."""
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeServer:
    def __init__(self, name, env, model_flag, default_port, fail_message, **record):
        """Starts as the engine's server starts: prints its command line, fails with
        `fail_message` when <env>_FAIL is set, starts the engine child, writes the record (with
        `record`'s extra fields), and hangs when <env>_NEVER_READY is set."""
        self.argv = sys.argv[1:]
        self.env = env
        self.port = int(self.opt("--port", str(default_port)))
        self.model = self.opt(model_flag)
        self.record_dir = os.environ.get(f"{env}_RECORD_DIR", ".")
        print(f"fake {name}: starting with {self.argv}", flush=True)
        if os.environ.get(f"{env}_FAIL"):
            print(fail_message, flush=True)
            sys.exit(3)
        engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])

        def on_term(sig, frame):
            engine.kill()
            os._exit(0)

        signal.signal(signal.SIGTERM, on_term)
        with open(os.path.join(self.record_dir, f"server_{self.port}.json"), "w") as f:
            json.dump({"argv": self.argv, "pid": os.getpid(), "pgid": os.getpgid(0),
                       "engine_pid": engine.pid, **record}, f)
        if os.environ.get(f"{env}_NEVER_READY"):
            time.sleep(3600)

    def opt(self, name, default=None):
        return self.argv[self.argv.index(name) + 1] if name in self.argv else default

    def serve(self, model_card, answer):
        """Serves until stopped: GET /v1/models answers {"data": [model_card]}; each POST, once
        authorised, recorded and delayed, is answered by answer(path, request) -> (status, body)."""
        server = self

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
                    self.reply(200, {"object": "list", "data": [model_card]})
                elif self.path == "/health":
                    self.reply(200, {})
                else:
                    self.reply(404, {"error": "not found"})

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                req = json.loads(self.rfile.read(n))
                key = server.opt("--api-key")
                if key and self.headers.get("Authorization") != f"Bearer {key}":
                    self.reply(401, {"error": "Unauthorized"})
                    return
                with open(os.path.join(server.record_dir, f"requests_{server.port}.jsonl"),
                          "a") as f:
                    f.write(json.dumps(req) + "\n")
                if delay := float(os.environ.get(f"{server.env}_DELAY_S", "0")):
                    time.sleep(delay)
                self.reply(*answer(self.path, req))

        ThreadingHTTPServer(("127.0.0.1", self.port), Handler).serve_forever()
