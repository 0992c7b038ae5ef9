// The reference's model names that lm-eval does not run (reference_model_names.hpp).
#include "lmeval/models/reference_model_names.hpp"

#include <algorithm>

#include "lmeval/core/error.hpp"
#include "lmeval/models/lm.hpp"

namespace lmeval {

namespace {

const char* const kServer =
    "start an OpenAI-compatible server for the model (vLLM, SGLang, llama.cpp, TGI, ...) and run "
    "--model local-completions --model_args model=M,base_url=http://HOST:PORT/v1/completions";
const char* const kNoTorchText =
    "a build of lm-eval with libtorch (cmake -DLMEVAL_WITH_TORCH=ON; scripts/setup.sh), or an "
    "OpenAI-compatible server for the model with --model local-completions";
const char* const kHf = "--model hf with the model's Hugging Face folder or Hub id";

std::vector<RefusedModelName> make_table() {
  const std::string server = kServer, hf = kHf;
  const std::string kNoTorch = kNoTorchText;
  std::vector<RefusedModelName> t = {
      {"azure-openai-chat-completions", "Azure OpenAI's chat API (AzureOpenaiChatCompletionsLM)",
       "--model local-chat-completions with base_url=<the deployment's chat/completions URL> and "
       "header={\"api-key\": ...}"},
      {"habana", "optimum-habana on Intel Gaudi (HabanaLM)", server + "; or " + hf},
      // Registered when lm-eval is built with libtorch; refused with this message otherwise.
      {"hf", "transformers models in process (HFLM), absent from this build (no libtorch)",
       kNoTorch},
      {"hf-audiolm-qwen", "Qwen-Audio models with audio inputs (HFAudioLM)",
       "nothing yet: lm-eval runs text-only models"},
      {"hf-auto", "transformers models in process (HFLM), absent from this build (no libtorch)",
       kNoTorch},
      {"hf-mistral3", "Mistral 3 multimodal models (Mistral3LM)", server + "; or " + hf},
      {"hf-multimodal", "transformers image-text models (HFMultimodalLM)",
       "nothing yet: lm-eval runs text-only models (" + hf + " for a text-only model)"},
      {"huggingface", "transformers models in process (HFLM), absent from this build (no libtorch)",
       kNoTorch},
      {"ipex", "optimum-intel's IPEX models (IPEXForCausalLM)", hf},
      {"litellm", "LiteLLM's client for many providers (LiteLLMChatCompletion)",
       "a LiteLLM proxy server with --model local-chat-completions"},
      {"litellm-chat", "LiteLLM's client for many providers (LiteLLMChatCompletion)",
       "a LiteLLM proxy server with --model local-chat-completions"},
      {"litellm-chat-completions", "LiteLLM's client for many providers (LiteLLMChatCompletion)",
       "a LiteLLM proxy server with --model local-chat-completions"},
      {"mamba_ssm", "state-space models through the mamba_ssm package (MambaLMWrapper)",
       server + " (lm-eval's hf backend does not run Mamba yet)"},
      {"megatron_lm", "Megatron-LM checkpoints on the Megatron runtime (MegatronLMEval)",
       "a Hugging Face export of the checkpoint with " + hf + "; or " + server},
      {"nemo_lm", "NVIDIA NeMo checkpoints on the NeMo runtime (NeMoLM)",
       "a Hugging Face export of the checkpoint with " + hf + "; or " + server},
      {"neuronx", "optimum-neuron on AWS Inferentia/Trainium (NeuronModelForCausalLM)",
       server + "; or " + hf},
      {"onnxruntime", "ONNX Runtime models (ONNXRuntimeLM)", hf + " on the original checkpoint"},
      {"onnxruntime-genai", "ONNX Runtime GenAI models (ONNXRuntimeGenAILM)",
       hf + " on the original checkpoint"},
      {"openvino", "optimum-intel's OpenVINO models (OptimumLM)",
       hf + " on the original checkpoint; or an OpenVINO model server with --model "
            "local-completions"},
      {"sglang-generate", "an SGLang server's native /generate API (SGLANGGENERATEAPI)",
       "the same server's /v1/completions with --model local-completions"},
      {"steered", "transformers models with steering vectors added to activations (SteeredModel)",
       "nothing yet: " + hf + " runs the unsteered model"},
      {"trtllm", "TensorRT-LLM engines (TRTLLM)",
       "Triton / TensorRT-LLM's OpenAI-compatible server with --model local-completions"},
      {"vllm-vlm", "vLLM's offline engine with image inputs (VLLM_VLM)",
       "nothing yet for images: lm-eval runs text-only models (a vLLM server with --model "
       "local-completions for text)"},
      {"winml", "Windows ML / ONNX models (WindowsML)", hf + " on the original checkpoint"},
  };
  return t;
}

}  // namespace

const std::vector<RefusedModelName>& refused_model_names() {
  static const std::vector<RefusedModelName> table = make_table();
  return table;
}

const RefusedModelName* find_refused_model(const std::string& name) {
  const auto& t = refused_model_names();
  auto it = std::find_if(t.begin(), t.end(), [&](const auto& r) { return r.name == name; });
  return it == t.end() ? nullptr : &*it;
}

std::string model_name_problem(const std::string& name, std::string* expected) {
  const auto& reg = ModelRegistry::instance();
  if (reg.find(name)) return "";
  std::string runs;
  for (const auto& n : reg.names()) runs += (runs.empty() ? "" : ", ") + n;
  if (const auto* r = find_refused_model(name)) {
    if (expected) *expected = "instead: " + r->instead + " (lm-eval runs: " + runs + ")";
    return "lm-eval does not run the reference's model '" + name + "' (" + r->what + ")";
  }
  if (expected) *expected = "one of: " + runs + " (`lm-eval ls models` lists them)";
  return "unknown model '" + name + "'";
}

void check_model_name(const std::string& name) {
  std::string expected;
  std::string problem = model_name_problem(name, &expected);
  if (!problem.empty()) throw UserError(problem, {"", 0, 0, "--model"}, expected);
}

}  // namespace lmeval
