// What HFLM asks of the model it runs (torch-free): the native libtorch Transformer, or a
// transformers model in the embedded Python (python_model.hpp) when lm-eval cannot run it itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/hf/transformer.hpp"

namespace lmeval::hf {

class CausalModel {
 public:
  virtual ~CausalModel() = default;

  // The config facts HFLM reads (architecture, vocab_size, max_position_embeddings, eos id).
  virtual const ArchConfig& config() const = 0;
  virtual int64_t num_parameters() const = 0;
  virtual std::string dtype_name() const = 0;  // "torch.float32", ...
  virtual bool on_cuda() const = 0;
  // As Transformer's (transformer.hpp).
  virtual std::vector<std::vector<SpanScore>> score(const std::vector<ScoreRow>& rows) = 0;
  virtual std::vector<std::vector<std::vector<SpanScore>>> score_trees(
      const std::vector<ScoreTree>& trees) = 0;
  virtual bool shares_prefixes() const = 0;
  virtual std::vector<std::vector<Token>> generate(const std::vector<std::vector<Token>>& prompts,
                                                   const SamplingOptions& options,
                                                   const StopFn& stop) = 0;
  // Continuous batching (transformer.hpp's Batching); false: generate_continuous runs static
  // batches of `slots` rows in order, as generate() would.
  virtual bool batches_continuously() const { return false; }
  virtual std::vector<std::vector<Token>> generate_continuous(
      const std::vector<std::vector<Token>>& prompts, const SamplingOptions& options,
      const StopFn& stop, const Batching& batching) {
    std::vector<std::vector<Token>> out;
    const size_t step = batching.slots > 0 ? static_cast<size_t>(batching.slots) : prompts.size();
    for (size_t pos = 0; pos < prompts.size(); pos += step) {
      const size_t end = std::min(prompts.size(), pos + step);
      std::vector<std::vector<Token>> part(prompts.begin() + static_cast<std::ptrdiff_t>(pos),
                                           prompts.begin() + static_cast<std::ptrdiff_t>(end));
      const StopFn shifted = [&](size_t row, const std::vector<Token>& g) {
        return stop && stop(pos + row, g);
      };
      for (auto& g : generate(part, options, shifted)) {
        if (batching.finished) batching.finished(out.size(), g);
        out.push_back(std::move(g));
      }
    }
    return out;
  }
  virtual double activation_bytes_per_token(int64_t length) const = 0;
  // As Transformer's, for models that batch continuously.
  virtual double generation_slot_bytes(int64_t capacity) const {
    return activation_bytes_per_token(capacity) * static_cast<double>(capacity);
  }
  // As Transformer's (several adapters over one base); false: the model is built per adapter.
  virtual bool switches_adapters() const { return false; }
  virtual void check_adapter(const std::filesystem::path& peft) const { (void)peft; }
  virtual void switch_adapter(const std::filesystem::path& peft) { (void)peft; }
  // The native Transformer, or null (tests and the benchmark reach its own methods).
  virtual Transformer* native() { return nullptr; }
};

// The native Transformer of `dir` (native_model.cpp, in the libtorch plugin only; the
// transformers plugin has none: transformers_plugin/entry.cpp).
std::unique_ptr<CausalModel> load_native_model(const std::filesystem::path& dir,
                                               const LoadOptions& options);

// The native path: the Transformer itself.
class NativeModel final : public CausalModel {
 public:
  explicit NativeModel(std::unique_ptr<Transformer> t) : t_(std::move(t)) {}
  const ArchConfig& config() const override { return t_->config(); }
  int64_t num_parameters() const override { return t_->num_parameters(); }
  std::string dtype_name() const override { return t_->dtype_name(); }
  bool on_cuda() const override { return t_->on_cuda(); }
  std::vector<std::vector<SpanScore>> score(const std::vector<ScoreRow>& rows) override {
    return t_->score(rows);
  }
  std::vector<std::vector<std::vector<SpanScore>>> score_trees(
      const std::vector<ScoreTree>& trees) override {
    return t_->score_trees(trees);
  }
  bool shares_prefixes() const override { return t_->shares_prefixes(); }
  std::vector<std::vector<Token>> generate(const std::vector<std::vector<Token>>& prompts,
                                           const SamplingOptions& options,
                                           const StopFn& stop) override {
    return t_->generate(prompts, options, stop);
  }
  bool batches_continuously() const override { return true; }
  std::vector<std::vector<Token>> generate_continuous(
      const std::vector<std::vector<Token>>& prompts, const SamplingOptions& options,
      const StopFn& stop, const Batching& batching) override {
    return t_->generate_continuous(prompts, options, stop, batching);
  }
  double activation_bytes_per_token(int64_t length) const override {
    return t_->activation_bytes_per_token(length);
  }
  double generation_slot_bytes(int64_t capacity) const override {
    return t_->generation_slot_bytes(capacity);
  }
  bool switches_adapters() const override { return t_->switches_adapters(); }
  void check_adapter(const std::filesystem::path& peft) const override { t_->check_adapter(peft); }
  void switch_adapter(const std::filesystem::path& peft) override { t_->switch_adapter(peft); }
  Transformer* native() override { return t_.get(); }

 private:
  std::unique_ptr<Transformer> t_;
};

}  // namespace lmeval::hf
