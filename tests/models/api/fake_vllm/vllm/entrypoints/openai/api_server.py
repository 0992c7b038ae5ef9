"""A fake of vLLM's OpenAI-compatible server (python -m vllm.entrypoints.openai.api_server) for
lm-eval's tests (fake_server.FakeServer with the FAKE_VLLM_ variables): POST /v1/completions with
token-id prompts answered from fake_engine in vLLM's JSON shapes (choices[].text,
choices[].prompt_logprobs as lists of {token_id: {logprob, rank, decoded_token}} with a null
first entry); its record also holds CUDA_VISIBLE_DEVICES. Its model card says max_model_len."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
import fake_engine  # noqa: E402
from fake_server import FakeServer  # noqa: E402

server = FakeServer("vLLM", "FAKE_VLLM", "--model", 8000,
                    "ValueError: fake engine error: unrecognized arguments for the engine",
                    cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"))
model = server.model
served = "finetuned" if "--enable-lora" in server.argv else model


def answer(path, req):
    if path != "/v1/completions" or req.get("model") not in (model, served):
        return 400, {"error": {"message": f"bad request for {req.get('model')}"}}
    ids = req["prompt"]
    choice = {"index": 0, "text": fake_engine.generate(ids, req.get("max_tokens", 16),
                                                       req.get("stop")),
              "finish_reason": "length"}
    if req.get("prompt_logprobs"):
        choice["prompt_logprobs"] = [
            None if e is None else {str(t): {"logprob": lp, "rank": r, "decoded_token": f"w{t}"}
                                    for t, lp, r in e}
            for e in fake_engine.prompt_logprobs(ids)]
    return 200, {"id": "cmpl-1", "object": "text_completion", "model": req["model"],
                 "choices": [choice]}


server.serve({"id": model, "object": "model",
              "max_model_len": int(server.opt("--max-model-len", "2048"))}, answer)
