// The decoder-only transformer of the hf backend, behind a torch-free interface (pimpl).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/hf/checkpoint.hpp"

namespace lmeval::hf {

using Token = int32_t;

struct LoadOptions {
  std::string dtype = "auto";  // auto | float32 | float16 | bfloat16 (| float64 for tests)
  std::string device = "cpu";  // cpu | cuda | cuda:N
  std::string softmax_dtype;   // "" = float32 at scored positions; or float16/bfloat16/float64
  int threads = 0;             // 0 = hardware concurrency
  // Tests: the device path (padded batches, tree masks; what CUDA runs) on the CPU in float32,
  // to prove it against the batch-invariant path.
  bool device_path = false;
  WeightSources weights;  // peft= / delta=, applied to the checkpoint's tensors as they load
};

// A span of positions of one row whose next-token predictions are scored:
// logits at position `first + i` are scored against `targets[i]`.
struct ScoreSpan {
  int64_t first = 0;
  std::vector<Token> targets;
};

struct ScoreRow {
  std::vector<Token> tokens;  // what is fed (rows of a batch are right-padded internally)
  std::vector<ScoreSpan> spans;
};

// A context fed once and continuations fed after it that attend to its keys and values
// (prefix sharing: a multiple-choice question's context runs once for all its choices). A
// branch's span positions index the sequence prefix + branch tokens, so a span's first target
// may be predicted by the prefix's last token.
struct ScoreTree {
  std::vector<Token> prefix;
  std::vector<ScoreRow> branches;
};

struct SpanScore {
  double logprob = 0.0;
  bool is_greedy = false;
};

struct SamplingOptions {
  int64_t max_new_tokens = 256;
  std::vector<Token> eos_ids;  // a row stops after producing one of these
  Token pad_id = 0;
  bool do_sample = false;
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = 0;
  std::optional<uint64_t> seed;
};

// Called after each decoding step for every unfinished row with its new tokens so far; returning
// true finishes the row.
using StopFn = std::function<bool(size_t row, const std::vector<Token>& generated)>;

// Continuous batching (Transformer::generate_continuous): a pool of `slots` rows decodes at
// once, a finished row's slot going to the next prompt in the order given; `token_budget` (0 =
// none) bounds the pool's keys and values, slots x (the longest prompt + max_new_tokens).
// Prompts that share a prefix with an earlier one copy its keys and values instead of computing
// them (`share_prefixes`, where rotary frequencies do not depend on the length): an earlier
// prompt keeps its first tokens while a later prompt still needs them (prefix_plan.hpp).
struct Batching {
  int64_t slots = 0;  // 0 = every prompt at once
  int64_t token_budget = 0;
  bool share_prefixes = true;
  // Called once per row as it finishes, with its new tokens (the same as returned).
  std::function<void(size_t row, const std::vector<Token>& generated)> finished;
};

class Transformer {
 public:
  static std::unique_ptr<Transformer> load(const std::filesystem::path& model_dir,
                                           const LoadOptions& options);
  ~Transformer();

  const ArchConfig& config() const;
  int64_t num_parameters() const;
  std::string dtype_name() const;  // "torch.float32", ...
  bool on_cuda() const;

  // One forward pass over right-padded rows; scores every span. Throws OutOfMemory on device OOM.
  std::vector<std::vector<SpanScore>> score(const std::vector<ScoreRow>& rows);
  // One forward pass over prefix trees: [tree][branch][span]. Each prefix runs once for all its
  // branches (batch-invariant path: prefix_forward.cpp; device path: one row per tree with a
  // tree mask, tree_rows.cpp); elsewhere each branch runs as a row of its own.
  std::vector<std::vector<std::vector<SpanScore>>> score_trees(const std::vector<ScoreTree>& trees);
  // True when scores do not depend on the batch (float32 on the CPU: kernels.hpp).
  bool batch_invariant() const;
  // True when score_trees computes a prefix once for all its branches (false for rotary
  // frequencies that depend on each sequence's length, and for the CPU's non-float32 path).
  bool shares_prefixes() const;

  // Full log-softmax rows (float32, [B][T][V] flattened) of a padded batch, for tests and tools:
  // ids and mask [B][T] (mask 1 = real token), positions [B][T].
  std::vector<float> full_logprobs(const std::vector<std::vector<Token>>& ids,
                                   const std::vector<std::vector<int64_t>>& mask,
                                   const std::vector<std::vector<int64_t>>& positions);

  // Generation with a KV cache, every prompt at once (generate_continuous with every row in a
  // slot). Returns the new tokens of each row (an EOS that ended a row included).
  std::vector<std::vector<Token>> generate(const std::vector<std::vector<Token>>& prompts,
                                           const SamplingOptions& options, const StopFn& stop);
  // Continuous batching (generation.cpp): rows admitted in the order given into a pool of
  // slots, each slot refilled as soon as its row ends (EOS, a stop, max_new_tokens). Greedy
  // rows get the tokens they get alone: each row attends to its own keys and positions only.
  std::vector<std::vector<Token>> generate_continuous(
      const std::vector<std::vector<Token>>& prompts, const SamplingOptions& options,
      const StopFn& stop, const Batching& batching);
  // The prefill tokens generate_continuous computed and those it copied from a shared prefix,
  // over the object's life (tests and the benchmark).
  std::pair<int64_t, int64_t> prefill_tokens() const;

  // Bytes of activations per token of a batch of the given length (for the CPU memory budget).
  double activation_bytes_per_token(int64_t length) const;
  // Bytes one slot of generate_continuous holds for sequences up to `capacity` tokens: its keys
  // and values, and a decoding step's activations of its row (for the CPU memory budget).
  double generation_slot_bytes(int64_t capacity) const;
  // Device matmul throughput in GFLOP/s (square matmuls of size n in the model dtype).
  double measure_matmul_gflops(int64_t n, int repeats);
  // Free device memory in bytes, or 0 when unknown.
  int64_t free_device_memory() const;
  // Tests of the out-of-memory handling without a GPU: any forward pass over more than `tokens`
  // tokens (rows x length) throws OutOfMemory, as a full device would. 0 = off.
  void simulate_memory_limit(int64_t tokens);

  // Several adapters over one base (peft=a,b; a model loaded with a peft adapter only): checks
  // an adapter against the base as a load would (UserError naming the file and the module), and
  // switches to one: the base's files, kept open since the load, are read again with the
  // adapter's edits in place of the present one's, so every tensor is what a load with that
  // adapter alone makes.
  bool switches_adapters() const;
  void check_adapter(const std::filesystem::path& peft) const;
  void switch_adapter(const std::filesystem::path& peft);

  struct Impl;

 private:
  explicit Transformer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Thrown by score()/generate() when the device ran out of memory; the caller shrinks the batch.
struct OutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace lmeval::hf
