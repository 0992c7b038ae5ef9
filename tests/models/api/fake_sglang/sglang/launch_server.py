"""A fake of SGLang's server (python -m sglang.launch_server) for lm-eval's tests
(fake_server.FakeServer of tests/models/api/fake_vllm with the FAKE_SGLANG_ variables): POST
/generate answered by fake_outputs as SGLang's native API answers (the Engine.generate dict); its
engine child stands for SGLang's scheduler process. Its model card says max_model_len, the
context length."""
from sglang import fake_outputs  # also puts fake_vllm (fake_server) on sys.path
from fake_server import FakeServer  # noqa: E402

server = FakeServer("SGLang", "FAKE_SGLANG", "--model-path", 30000,
                    "launch_server.py: error: unrecognized arguments for the fake engine")
model = server.model


def answer(path, req):
    if path != "/generate" or not isinstance(req.get("input_ids"), list):
        return 400, {"error": {"message": "bad request"}}
    return 200, fake_outputs.answer(req)


server.serve({"id": model, "object": "model", "root": model,
              "max_model_len": int(server.opt("--context-length", str(fake_outputs.CONTEXT_LEN)))},
             answer)
