// The hf backend's transformers path: a model lm-eval does not run natively, built and run by
// transformers in the embedded Python (core/embedded_python.hpp; the plugin's
// transformers_model.py). HFLM keeps its tokenizer, requests, batching and generation loop.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "lmeval/core/python_plugin_api.hpp"
#include "lmeval/models/hf/hf_args.hpp"
#include "models/hf/causal_model.hpp"

namespace lmeval::hf {

class PythonModel final : public CausalModel {
 public:
  // Builds the model in `dir` (pretrained resolved, subfolder applied) from `args` as the
  // reference's HFLM builds it. UserError (exit 2) when Python cannot run here, the environment
  // lacks torch or transformers (what is missing and how to install it), or building raises
  // (its message); `why` names the reason the model needs transformers in each.
  static std::unique_ptr<PythonModel> load(const std::filesystem::path& dir, const HfArgs& args,
                                           const std::string& why, int64_t tokenizer_size);

  const ArchConfig& config() const override { return cfg_; }
  int64_t num_parameters() const override { return n_params_; }
  std::string dtype_name() const override { return dtype_; }
  bool on_cuda() const override { return cuda_; }
  std::vector<std::vector<SpanScore>> score(const std::vector<ScoreRow>& rows) override;
  // Each branch as a row of its own (prefix + branch tokens): transformers shares no prefix.
  std::vector<std::vector<std::vector<SpanScore>>> score_trees(
      const std::vector<ScoreTree>& trees) override;
  bool shares_prefixes() const override { return false; }
  std::vector<std::vector<Token>> generate(const std::vector<std::vector<Token>>& prompts,
                                           const SamplingOptions& options,
                                           const StopFn& stop) override;
  double activation_bytes_per_token(int64_t length) const override;

  // The interpreter it runs in (for the log line).
  const std::string& interpreter() const { return interpreter_; }
  // What the Python side said of the model (model_class, device, ...).
  const Json& info() const { return info_; }

 private:
  PythonModel() = default;
  Json call(const char* method, const Json& kwargs, const StopFn* stop = nullptr);

  const PythonPluginApi* api_ = nullptr;
  void* handle_ = nullptr;  // kept for the process's life, as the interpreter
  ArchConfig cfg_;
  Json info_;
  int64_t n_params_ = 0;
  std::string dtype_;
  bool cuda_ = false;
  std::string interpreter_;
};

}  // namespace lmeval::hf
