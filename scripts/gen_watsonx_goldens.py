#!/usr/bin/env python3
"""Goldens for --model watsonx_llm: the reference's own WatsonxLLM (lm_eval 0.4.13,
lm_eval/models/ibm_watsonx_ai.py) over the ibm-watsonx-ai SDK (1.8.1), pointed by WATSONX_URL at a
local fake watsonx.ai software (Cloud Pak for Data) server: HTTPS on a free loopback port with a
throwaway self-signed certificate (the SDK refuses http:// URLs), trusted through SSL_CERT_FILE.
WATSONX_URL without "cloud.ibm.com" is the software flow: the SDK exchanges username + API key
(or password) at /icp4d-api/v1/authorize for a bearer token, reads the project, the model specs,
then posts /ml/v1/text/generation and /ml/v1/text/tokenization. One case uses an IBM Cloud URL:
the SDK then posts the key to IBM Cloud's IAM host; this process resolves *.cloud.ibm.com to the
fake (whose certificate names them), nothing leaves the machine. Records every request (method,
host, path with query, body, Content-Type, Authorization), the fake's answer, and WatsonxLLM's
results or exception.

The fake tokenizes with the regex \\s*\\S+ (a "</s>" appended to a tokenization of a text with
EOS in it, one "X" token put first for a text with MISMATCH in it); a generation's input_tokens
are those of the input, the first without a logprob, token i (0-based) with logprob -i/8 and
rank 2 when it contains a "z", else 1; its generated text is "gen:" + the input's last 12
characters.

Usage (from the repository root; VENV has lm-eval==0.4.13 ibm-watsonx-ai python-dotenv; openssl
on PATH):
    VENV/bin/python scripts/gen_watsonx_goldens.py > tests/models/api/goldens/watsonx_reference.json
"""
import base64
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "wx-test-api-key-0000"
PASSWORD = "wx-test-password-0000"
# A fixed unsigned JWT (the SDK reads its exp claim; 4102444800 = 2100-01-01).
_seg = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()  # noqa
TOKEN = f'{_seg({"alg": "none", "typ": "JWT"})}.{_seg({"username": "u", "sub": "u", "iat": 1700000000, "exp": 4102444800})}.sig'  # noqa: E501

exchanges = []


def tokens(text):
    t = re.findall(r"\s*\S+", text)
    if "MISMATCH" in text:
        t = ["X"] + t
    return t


def input_tokens(text):
    out = []
    for i, t in enumerate(re.findall(r"\s*\S+", text)):
        tok = {"text": t, "rank": 2 if "z" in t else 1}
        if i:
            tok["logprob"] = -i / 8
        out.append(tok)
    return out


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def answer(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode() if n else ""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw  # IAM's form-encoded body
        host = (self.headers.get("Host") or "").split(":")[0]
        p = self.path
        status, ans = 404, {"errors": [{"code": "not_found", "message": "fake: " + p}]}
        if p.startswith("/ml/wml_services/"):
            status, ans = 200, {"version": "5.1.0"}
        elif p == "/identity/token":
            status, ans = 200, {"access_token": TOKEN, "refresh_token": "not_supported",
                                "token_type": "Bearer", "expires_in": 3600,
                                "expiration": 4102444800, "scope": "ibm openid"}
        elif p == "/icp4d-api/v1/authorize":
            status, ans = 200, {"_messageCode_": "200", "message": "Success", "token": TOKEN}
        elif p.startswith("/v2/projects/"):
            status, ans = 200, {"metadata": {"guid": p.split("/")[3]},
                                "entity": {"name": "p", "storage": {"type": "assetfiles"}}}
        elif p.startswith("/ml/v1/foundation_model_specs"):
            specs = [{"model_id": "ibm/granite-3-8b-instruct",
                      "functions": [{"id": "text_generation"}, {"id": "text_chat"}]}]
            status, ans = 200, {"total_count": 1, "limit": 200, "resources": specs,
                                "results": specs}
        elif p.startswith("/ml/v4/deployments/"):
            dep = p.split("/")[4].split("?")[0]
            status, ans = 200, {"metadata": {"id": dep, "name": "d"},
                                "entity": {"base_model_id": "ibm/granite-3-8b-instruct",
                                           "asset": {"id": dep}, "status": {"state": "ready"}}}
        elif "/text/tokenization" in p:
            t = tokens(body["input"])
            if "EOS" in body["input"]:
                t = t + ["</s>"]
            status, ans = 200, {"model_id": body.get("model_id"),
                                "result": {"token_count": len(t), "tokens": t}}
        elif "/text/generation" in p:
            text = body["input"]
            status, ans = 200, {
                "model_id": body.get("model_id"), "created_at": "2026-01-01T00:00:00.000Z",
                "results": [{"generated_text": "gen:" + text[-12:], "generated_token_count": 1,
                             "input_token_count": len(tokens(text)), "stop_reason": "max_tokens",
                             "generated_tokens": [{"text": "gen", "logprob": -0.5, "rank": 1}],
                             "input_tokens": input_tokens(text)}]}
        elif "/text/chat" in p:
            last = body["messages"][-1]["content"]
            last = last if isinstance(last, str) else json.dumps(last)
            status, ans = 200, {"id": "chat-1", "model_id": body.get("model_id"),
                                "choices": [{"index": 0, "message": {"role": "assistant",
                                                                     "content": "chat:" + last},
                                             "finish_reason": "stop"}]}
        exchanges.append({"method": method, "host": host, "path": p, "body": body,
                          "content_type": self.headers.get("Content-Type"),
                          "authorization": self.headers.get("Authorization"),
                          "status": status, "answer": ans})
        data = json.dumps(ans).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer("GET")

    def do_POST(self):
        self.answer("POST")


# IBM Cloud: the SDK sends the key to IBM Cloud's IAM host, fixed by the service URL. This
# process resolves those hosts (and the service's) to the fake, whose certificate names them.
CLOUD_URL = "https://us-south.ml.cloud.ibm.com"
CLOUD_HOSTS = ["*.cloud.ibm.com", "*.ml.cloud.ibm.com"]
_getaddrinfo = socket.getaddrinfo


def _loopback(host, port, *a, **k):
    if isinstance(host, str) and host.endswith(".cloud.ibm.com"):
        return _getaddrinfo("127.0.0.1", server.server_port, *a, **k)
    return _getaddrinfo(host, port, *a, **k)


socket.getaddrinfo = _loopback

tmp = tempfile.mkdtemp()
cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:" + ",DNS:".join(CLOUD_HOSTS)],
               check=True, capture_output=True)
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
URL = f"https://127.0.0.1:{server.server_port}"
os.environ["SSL_CERT_FILE"] = cert
os.environ["REQUESTS_CA_BUNDLE"] = cert

from lm_eval.api.instance import Instance  # noqa: E402
from lm_eval.models import ibm_watsonx_ai as wx  # noqa: E402
from lm_eval.models.api_models import JsonChatStr  # noqa: E402

ENV = ("WATSONX_URL", "WATSONX_API_KEY", "WATSONX_TOKEN", "WATSONX_PROJECT_ID",
       "WATSONX_SPACE_ID", "WATSONX_USERNAME", "WATSONX_PASSWORD")
DEFAULT_ENV = {"WATSONX_URL": "<URL>", "WATSONX_USERNAME": "u", "WATSONX_API_KEY": KEY,
               "WATSONX_PROJECT_ID": "proj-1"}


def scrub(s):
    return s.replace(URL, "<URL>").replace(KEY, "<KEY>").replace(PASSWORD, "<PASSWORD>")


def run(model_args, env=None, calls=()):
    env = dict(DEFAULT_ENV if env is None else env)
    for k in ENV:
        os.environ.pop(k, None)
    for k, v in env.items():
        os.environ[k] = v.replace("<URL>", URL)
    wx.get_watsonx_credentials.cache_clear()
    exchanges.clear()
    out = {"model_args": model_args, "env": env, "calls": []}
    try:
        lm = wx.WatsonxLLM.create_from_arg_string(model_args, {"batch_size": 1})
        out["generate_params"] = lm.generate_params
    except Exception as e:  # noqa: BLE001 - the reference's outcome
        out["error"] = {"type": type(e).__name__, "message": scrub(str(e))}
        lm = None
    out["init_exchanges"] = list(exchanges)
    for method, reqs in calls if lm else ():
        exchanges.clear()
        call = {"method": method, "requests": reqs}
        insts = []
        for i, r in enumerate(reqs):
            args = tuple(r)
            if method == "generate_until" and isinstance(r[0], list):
                args = (JsonChatStr(json.dumps(r[0])), r[1])
            insts.append(Instance(request_type=method, doc={}, idx=i, arguments=args))
        try:
            res = getattr(lm, method)(insts)
            call["results"] = [list(x) if isinstance(x, tuple) else x for x in res]
        except Exception as e:  # noqa: BLE001
            call["error"] = {"type": type(e).__name__, "message": scrub(str(e))}
        call["exchanges"] = list(exchanges)
        out["calls"].append(call)
    return out


GEN = ("generate_until", [["Once upon a time", {"until": ["\n"], "max_gen_toks": 5}],
                          ["Café? ü", {"until": ["."], "temperature": 0.5, "do_sample": True}]])
LL = ("loglikelihood", [["Q: a", " b"], ["Q: jazz EOS", " yes"], ["The", " fizz buzz"]])
cases = [
    run("model_id=ibm/granite-3-8b-instruct", calls=[GEN, LL]),
    run("model_id=ibm/granite-3-8b-instruct,do_sample=True,temperature=0.7,top_p=0.9,top_k=5,"
        "seed=3,max_new_tokens=20,repetition_penalty=1.1,min_new_tokens=2,time_limit=1000,"
        "truncate_input_tokens=100", calls=[GEN]),
    run("model_id=ibm/granite-3-8b-instruct,temperature=0.7,top_k=5", calls=[GEN]),
    run("deployment_id=0f6b2c1e-8d4a-4f3b-9a1e-2c3d4e5f6a7b", calls=[GEN]),
    run("model_id=ibm/granite-3-8b-instruct",
        env={"WATSONX_URL": "<URL>", "WATSONX_USERNAME": "u", "WATSONX_PASSWORD": PASSWORD,
             "WATSONX_PROJECT_ID": "proj-2"}, calls=[GEN]),
    run("model_id=ibm/granite-3-8b-instruct",
        calls=[("loglikelihood", [["MISMATCH a", " b"]]),
               ("loglikelihood_rolling", [["some text"]]),
               ("generate_until", [[[{"role": "user", "content": "Hi"}], {"until": ["\n"]}]])]),
    run("model_id=ibm/granite-3-8b-instruct",
        env={"WATSONX_URL": "<URL>", "WATSONX_USERNAME": "u", "WATSONX_API_KEY": KEY,
             "WATSONX_SPACE_ID": "space-1"}, calls=[GEN]),
    run("model_id=ibm/granite-3-8b-instruct",
        env={"WATSONX_URL": CLOUD_URL, "WATSONX_API_KEY": KEY, "WATSONX_PROJECT_ID": "proj-3"},
        calls=[GEN, ("loglikelihood", [["Q: a", " b"]])]),
    run("model_id=ibm/granite-3-8b-instruct", env={"WATSONX_URL": "<URL>"}),
    run("temperature=0.5"),
]
json.dump({"api_key": KEY, "password": PASSWORD, "token": TOKEN, "cases": cases}, sys.stdout,
          indent=1, ensure_ascii=False)
print()
server.shutdown()
