// Loading and running the hf backend's decoder (ATen); architectures are described in arch/.
// Numerics follow transformers' eager implementations: RMSNorm in float32, rotary cos/sin in
// float32, attention softmax in float32.
#include "models/hf/transformer.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/arch/weight_loader.hpp"
#include "models/hf/gguf_model.hpp"
#include "models/hf/native_weights.hpp"
#include "models/hf/transformer_impl.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <thread>

#include "lmeval/core/error.hpp"
#include "lmeval/core/log.hpp"

namespace lmeval::hf {

using at::Tensor;

namespace {

std::optional<at::ScalarType> dtype_by_name(const std::string& name) {
  if (name == "float32" || name == "float" || name == "torch.float32") return at::kFloat;
  if (name == "float16" || name == "half" || name == "torch.float16") return at::kHalf;
  if (name == "bfloat16" || name == "torch.bfloat16") return at::kBFloat16;
  if (name == "float64" || name == "double" || name == "torch.float64") return at::kDouble;
  return std::nullopt;
}

// transformers' get_state_dict_dtype: the dtype of the first floating tensor.
std::optional<at::ScalarType> first_float_dtype(const WeightArchive& w) {
  for (const auto& name : w.names()) {
    const TensorView* t = w.find(name);
    if (t && (t->dtype == "F32" || t->dtype == "F16" || t->dtype == "BF16" || t->dtype == "F64"))
      return safetensors_scalar_type(t->dtype);
  }
  return std::nullopt;
}

}  // namespace

// Loads a tensor under the first of `names` present, checks its shape, converts to the model
// dtype/device.
Tensor Transformer::Impl::take(const WeightArchive& w, const std::vector<std::string>& names,
                               const std::vector<int64_t>& shape, bool required, bool count) {
  const TensorView* view = find_weight(w, names, shape, required, cfg.architecture);
  if (!view) return {};
  used_tensors.insert(view->name);
  Tensor src = tensor_over(*view);
  Tensor out = src.to(fopt(), /*non_blocking=*/false, /*copy=*/true);
  w.release(*view);
  if (count) n_params += out.numel();
  return out;
}

void Transformer::Impl::load_weights(const WeightArchive& w) {
  WeightLoader loader(*this, w);
  find_arch(cfg.architecture)->load(loader);
  if (cfg.tie_word_embeddings) head_w = embed;
}

// transformers warns about checkpoint tensors its model has no place for (a config.json with
// fewer layers than the weights, weights of another architecture) and runs without them: so does
// this loader. Buffers that old checkpoints carry and transformers ignores are not counted.
void Transformer::Impl::warn_unused(const WeightArchive& w) const {
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::vector<std::string> unused;
  for (const auto& name : w.names()) {
    if (used_tensors.count(name)) continue;
    if (ends_with(name, "rotary_emb.inv_freq") || ends_with(name, ".attn.bias") ||
        ends_with(name, ".attn.masked_bias") || ends_with(name, ".attention.bias") ||
        ends_with(name, ".attention.masked_bias") ||
        (cfg.tie_word_embeddings && (name == "lm_head.weight" || name == "embed_out.weight")))
      continue;
    unused.push_back(name);
  }
  if (unused.empty()) return;
  std::string list;
  for (size_t i = 0; i < unused.size() && i < 5; ++i) list += (i ? ", " : "") + unused[i];
  if (unused.size() > 5) list += ", ...";
  log::warn("hf: " + std::to_string(unused.size()) + " tensor" + (unused.size() == 1 ? "" : "s") +
            " of the checkpoint " + (unused.size() == 1 ? "is" : "are") + " not used by " +
            cfg.architecture + " as " + config_path + " describes it (" + list +
            "): check num_hidden_layers and the architecture");
}

void Transformer::Impl::check_tokens(const std::vector<Token>& ids) const {
  for (Token t : ids)
    if (t < 0 || t >= cfg.vocab_size)
      throw UserError("token id " + std::to_string(t) + " is outside the model's vocabulary of " +
                          std::to_string(cfg.vocab_size) +
                          " tokens (the tokenizer, or prefix_token_id, is not this model's)",
                      {config_path, 0, 0, "$.vocab_size"},
                      "token ids from 0 to " + std::to_string(cfg.vocab_size - 1));
}

void Transformer::Impl::check_positions(int64_t positions) const {
  if (cfg.learned_positions > 0 && positions + cfg.position_offset > cfg.learned_positions) {
    const int64_t n = cfg.learned_positions - cfg.position_offset;
    const char* field =
        cfg.architecture == "GPT2LMHeadModel" ? "$.n_positions" : "$.max_position_embeddings";
    throw UserError("a sequence of " + std::to_string(positions) +
                        " tokens is longer than the model's " + std::to_string(n) +
                        " learned positions",
                    {config_path, 0, 0, field},
                    "sequences of at most " + std::to_string(n) +
                        " tokens: --model_args max_length at most " + std::to_string(n));
  }
}

void Transformer::Impl::check_rows(const std::vector<ScoreRow>& rows, int64_t prefix_len) const {
  for (const auto& r : rows) {
    check_tokens(r.tokens);
    check_positions(prefix_len + static_cast<int64_t>(r.tokens.size()));
    for (const auto& s : r.spans) check_tokens(s.targets);
  }
}

Transformer::Transformer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transformer::~Transformer() = default;

std::unique_ptr<Transformer> Transformer::load(const std::filesystem::path& dir,
                                               const LoadOptions& options) {
  auto impl = std::make_unique<Impl>();
  // A GGUF file holds the config as metadata, which transformers turns into a config.json's
  // fields (gguf_model.hpp).
  if (options.weights.gguf.empty()) {
    impl->cfg = load_arch_config(dir);
    impl->config_path = (dir / "config.json").string();
  } else {
    impl->cfg = parse_arch_config(gguf_config_json(GgufFile(options.weights.gguf)),
                                  options.weights.gguf.string());
    impl->config_path = options.weights.gguf.string();
  }
  const ArchConfig& cfg = impl->cfg;
  impl->device = native_device(options.device);
  // dtype=auto (HFLM's default, passed on to from_pretrained): transformers' _get_dtype takes
  // the config's dtype / torch_dtype, else the checkpoint's first floating tensor's (below, once
  // the weights are open), on every device. float16 and bfloat16 run on the CPU with torch 2.x's
  // roundings (reduced_precision.hpp).
  const bool auto_dtype = options.dtype.empty() || options.dtype == "auto";
  if (auto_dtype) {
    impl->dtype = dtype_by_name(cfg.torch_dtype).value_or(at::kFloat);
  } else {
    auto t = dtype_by_name(options.dtype);
    if (!t)
      throw UserError("unknown dtype '" + options.dtype + "'", {"", 0, 0, "dtype"},
                      "auto, float32, float16 or bfloat16");
    impl->dtype = *t;
  }
  impl->force_device_path = options.device_path;
  // HFLM's log_softmax runs in softmax_dtype when given, else in the logits' dtype.
  std::optional<at::ScalarType> softmax_dtype;
  if (!options.softmax_dtype.empty() && options.softmax_dtype != "auto") {
    softmax_dtype = dtype_by_name(options.softmax_dtype);
    if (!softmax_dtype)
      throw UserError("unknown softmax_dtype '" + options.softmax_dtype + "'",
                      {"", 0, 0, "softmax_dtype"}, "float32, float16, bfloat16 or float64");
  }
  if (!impl->device.is_cuda()) {
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    int threads = options.threads > 0 ? options.threads : cores;
    // More threads than cores only adds contention (threads=4096 on 2 cores ran 30x slower).
    if (cores > 0 && threads > cores) {
      log::warn("hf: threads=" + std::to_string(threads) + " is more than the " +
                std::to_string(cores) + " cores of this machine; using " + std::to_string(cores));
      threads = cores;
    }
    if (threads > 0) at::set_num_threads(threads);
  }
  c10::InferenceMode guard;
  auto archive = WeightArchive::open(dir, options.weights);
  if (auto_dtype && cfg.torch_dtype.empty() && options.weights.gguf.empty())
    impl->dtype = first_float_dtype(*archive).value_or(at::kFloat);
  impl->softmax_dtype = softmax_dtype.value_or(impl->dtype);
  guarded([&] {
    impl->load_weights(*archive);
    return 0;
  });
  impl->warn_unused(*archive);
  if (!options.weights.peft.empty()) impl->adapter_archive = std::move(archive);
  if (cfg.rope != RopeType::kNone) impl->inv_freq_for_length(0);  // a bad rope config fails at load
  if (cfg.embed_scale)
    impl->embed_normalizer =
        at::scalar_tensor(std::sqrt(static_cast<double>(cfg.hidden_size)), at::kFloat)
            .to(impl->fopt());
  return std::unique_ptr<Transformer>(new Transformer(std::move(impl)));
}

bool Transformer::switches_adapters() const { return impl_->adapter_archive != nullptr; }

void Transformer::check_adapter(const std::filesystem::path& peft) const {
  if (!impl_->adapter_archive) throw RuntimeError("hf: this model was loaded without an adapter");
  impl_->adapter_archive->check_adapter(peft);
}

void Transformer::switch_adapter(const std::filesystem::path& peft) {
  if (!impl_->adapter_archive) throw RuntimeError("hf: this model was loaded without an adapter");
  c10::InferenceMode guard;
  impl_->adapter_archive->switch_adapter(peft);
  // The architecture's loader again, over the same open files: the stacked tensors ([q; k; v],
  // [gate; up]) an adapter's module is part of are known to it alone.
  impl_->n_params = 0;
  impl_->used_tensors.clear();
  guarded([&] {
    impl_->load_weights(*impl_->adapter_archive);
    return 0;
  });
}

const ArchConfig& Transformer::config() const { return impl_->cfg; }
int64_t Transformer::num_parameters() const { return impl_->n_params; }
std::string Transformer::dtype_name() const { return torch_dtype_name(impl_->dtype); }
bool Transformer::on_cuda() const { return impl_->device.is_cuda(); }

// A span's score from `picked` (the targets' log-probs in order, from position k on) and the
// argmax of each scored row (`row_of[k]`: the row of the k-th target).
SpanScore span_score(const Tensor& picked, const int64_t* greedy,
                     const std::vector<int64_t>& row_of, size_t k,
                     const std::vector<Token>& targets) {
  SpanScore sc;
  const int64_t n = static_cast<int64_t>(targets.size());
  // float32 log-probs are summed in double (less rounding than the reference's float32 sum);
  // other log-prob dtypes are summed in that dtype, as the reference does.
  if (n == 0) {
    sc.logprob = 0.0;
  } else if (picked.scalar_type() == at::kFloat) {
    const float* pv = picked.data_ptr<float>() + k;
    double acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += pv[i];
    sc.logprob = acc;
  } else if (picked.scalar_type() == at::kHalf || picked.scalar_type() == at::kBFloat16) {
    // torch 2.x sums a float16/bfloat16 tensor in float32 and rounds the sum once.
    sc.logprob = picked.narrow(0, static_cast<int64_t>(k), n)
                     .to(at::kFloat)
                     .sum()
                     .to(picked.scalar_type())
                     .item<double>();
  } else {
    sc.logprob = picked.narrow(0, static_cast<int64_t>(k), n).sum().item<double>();
  }
  sc.is_greedy = true;
  for (int64_t i = 0; i < n; ++i)
    if (greedy[row_of[k + i]] != targets[i]) sc.is_greedy = false;
  return sc;
}

std::vector<std::vector<std::vector<SpanScore>>> tree_scores(const std::vector<ScoreTree>& trees,
                                                             const Tensor& picked,
                                                             const int64_t* greedy,
                                                             const std::vector<int64_t>& row_of) {
  std::vector<std::vector<std::vector<SpanScore>>> out(trees.size());
  size_t k = 0;
  for (size_t i = 0; i < trees.size(); ++i)
    for (const auto& b : trees[i].branches) {
      out[i].emplace_back();
      for (const auto& s : b.spans) {
        out[i].back().push_back(span_score(picked, greedy, row_of, k, s.targets));
        k += s.targets.size();
      }
    }
  return out;
}

bool Transformer::batch_invariant() const { return impl_->invariant_path(); }

bool Transformer::shares_prefixes() const {
  return impl_->invariant_path() || (impl_->device_path() && !rope_length_dependent(impl_->cfg));
}

void Transformer::simulate_memory_limit(int64_t tokens) { impl_->simulated_limit_tokens = tokens; }

std::vector<std::vector<std::vector<SpanScore>>> Transformer::score_trees(
    const std::vector<ScoreTree>& trees) {
  Impl& m = *impl_;
  for (const auto& t : trees) {
    m.check_tokens(t.prefix);
    m.check_rows(t.branches, static_cast<int64_t>(t.prefix.size()));
  }
  std::vector<std::vector<std::vector<SpanScore>>> out(trees.size());
  if (m.device_path() && !rope_length_dependent(m.cfg)) {
    c10::InferenceMode guard;
    return guarded([&] { return m.score_tree_rows(trees); });
  }
  if (!m.invariant_path()) {
    std::vector<ScoreRow> rows;
    for (const auto& t : trees)
      for (const auto& b : t.branches) {
        ScoreRow r{t.prefix, b.spans};
        r.tokens.insert(r.tokens.end(), b.tokens.begin(), b.tokens.end());
        rows.push_back(std::move(r));
      }
    auto flat = score(rows);
    size_t k = 0;
    for (size_t i = 0; i < trees.size(); ++i)
      for (size_t j = 0; j < trees[i].branches.size(); ++j) out[i].push_back(std::move(flat[k++]));
    return out;
  }
  if (rope_length_dependent(m.cfg)) {
    // The rotary frequencies follow each sequence's full length (rope.hpp), so a context's keys
    // cannot be shared by continuations of other lengths: every branch runs as its own row.
    bool shared = false;
    for (const auto& t : trees)
      for (const auto& b : t.branches) shared = shared || !b.tokens.empty();
    if (shared) {
      std::vector<ScoreTree> flat;
      for (const auto& t : trees)
        for (const auto& b : t.branches) {
          ScoreTree one{t.prefix, {ScoreRow{{}, b.spans}}};
          one.prefix.insert(one.prefix.end(), b.tokens.begin(), b.tokens.end());
          flat.push_back(std::move(one));
        }
      auto scored = score_trees(flat);
      size_t k = 0;
      for (size_t i = 0; i < trees.size(); ++i)
        for (size_t j = 0; j < trees[i].branches.size(); ++j)
          out[i].push_back(std::move(scored[k++][0]));
      return out;
    }
  }
  int64_t fed = 0;
  for (const auto& t : trees) {
    fed += static_cast<int64_t>(t.prefix.size());
    for (const auto& b : t.branches) fed += static_cast<int64_t>(b.tokens.size());
  }
  m.check_simulated_limit(fed);
  c10::InferenceMode guard;
  return guarded([&] {
    std::vector<Token> ids;
    std::vector<Impl::Seq> seqs;
    std::vector<std::vector<int64_t>> branch_row0(trees.size());
    std::vector<int64_t> prefix_row0(trees.size());
    for (size_t i = 0; i < trees.size(); ++i) {
      const int64_t parent = static_cast<int64_t>(seqs.size());
      prefix_row0[i] = static_cast<int64_t>(ids.size());
      seqs.push_back({prefix_row0[i], static_cast<int64_t>(trees[i].prefix.size()), -1});
      ids.insert(ids.end(), trees[i].prefix.begin(), trees[i].prefix.end());
      for (const auto& b : trees[i].branches) {
        branch_row0[i].push_back(static_cast<int64_t>(ids.size()));
        if (b.tokens.empty()) continue;
        seqs.push_back(
            {static_cast<int64_t>(ids.size()), static_cast<int64_t>(b.tokens.size()), parent});
        ids.insert(ids.end(), b.tokens.begin(), b.tokens.end());
      }
    }
    // Rows whose next-token predictions are scored (a prefix's last row once for all branches).
    std::map<int64_t, int64_t> slot;
    std::vector<int64_t> rows, row_of, cols;
    for (size_t i = 0; i < trees.size(); ++i) {
      const int64_t P = static_cast<int64_t>(trees[i].prefix.size());
      for (size_t j = 0; j < trees[i].branches.size(); ++j)
        for (const auto& s : trees[i].branches[j].spans)
          for (size_t q = 0; q < s.targets.size(); ++q) {
            const int64_t f = s.first + static_cast<int64_t>(q);
            const int64_t r = f < P ? prefix_row0[i] + f : branch_row0[i][j] + (f - P);
            auto [it, fresh] = slot.emplace(r, static_cast<int64_t>(rows.size()));
            if (fresh) rows.push_back(r);
            row_of.push_back(it->second);
            cols.push_back(s.targets[q]);
          }
    }
    if (rows.empty()) {
      for (size_t i = 0; i < trees.size(); ++i)
        for (const auto& b : trees[i].branches) out[i].emplace_back(b.spans.size());
      return out;
    }
    Tensor h = m.forward_invariant(ids, seqs);
    // Log-softmax rows in chunks, so that no [scored rows x vocab] tensor outlives a chunk.
    const int64_t n = static_cast<int64_t>(rows.size()), V = m.cfg.vocab_size;
    std::vector<std::vector<int64_t>> picks_of(rows.size());  // row -> indices into row_of
    for (size_t k = 0; k < row_of.size(); ++k)
      picks_of[row_of[k]].push_back(static_cast<int64_t>(k));
    Tensor picked = at::empty({static_cast<int64_t>(row_of.size())}, at::kFloat);
    Tensor greedy = at::empty({n}, at::kLong);
    constexpr int64_t kChunk = 64;
    for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
      const int64_t c1 = std::min(n, c0 + kChunk);
      Tensor idx = at::from_blob(rows.data() + c0, {c1 - c0}, at::kLong);
      Tensor lp = m.logprobs_invariant(h.index_select(0, idx));
      const float* l = lp.data_ptr<float>();
      for (int64_t r = c0; r < c1; ++r) {
        const float* row = l + (r - c0) * V;
        greedy.data_ptr<int64_t>()[r] = std::max_element(row, row + V) - row;
        for (int64_t k : picks_of[r]) picked.data_ptr<float>()[k] = row[cols[k]];
      }
    }
    return tree_scores(trees, picked, greedy.data_ptr<int64_t>(), row_of);
  });
}

std::vector<std::vector<SpanScore>> Transformer::score(const std::vector<ScoreRow>& rows) {
  Impl& m = *impl_;
  m.check_rows(rows);
  if (m.invariant_path()) {
    std::vector<ScoreTree> trees;
    for (const auto& r : rows) trees.push_back({r.tokens, {ScoreRow{{}, r.spans}}});
    auto t = score_trees(trees);
    std::vector<std::vector<SpanScore>> out;
    for (auto& x : t) out.push_back(std::move(x[0]));
    return out;
  }
  c10::InferenceMode guard;
  return guarded([&] {
    const int64_t B = static_cast<int64_t>(rows.size());
    int64_t T = 0;
    for (const auto& r : rows) T = std::max<int64_t>(T, static_cast<int64_t>(r.tokens.size()));
    m.check_simulated_limit(B * T);
    std::vector<int64_t> ids(static_cast<size_t>(B * T), 0);
    for (int64_t b = 0; b < B; ++b)
      for (size_t t = 0; t < rows[b].tokens.size(); ++t) ids[b * T + t] = rows[b].tokens[t];
    Tensor ids_t = at::from_blob(ids.data(), {B, T}, at::kLong).to(m.device);
    Tensor pos = at::arange(0, T, m.lopt()).unsqueeze(0).expand({B, T});
    std::vector<int64_t> lengths;
    for (const auto& r : rows) lengths.push_back(static_cast<int64_t>(r.tokens.size()));
    Tensor h = m.forward(ids_t, pos, nullptr, {}, &lengths);
    // Only the scored positions go through the LM head.
    std::map<int64_t, int64_t> slot;  // flat position -> row of `sel`
    std::vector<int64_t> flat, pick_row, pick_col;
    for (int64_t b = 0; b < B; ++b)
      for (const auto& s : rows[b].spans)
        for (size_t i = 0; i < s.targets.size(); ++i) {
          const int64_t f = b * T + s.first + static_cast<int64_t>(i);
          auto [it, fresh] = slot.emplace(f, static_cast<int64_t>(flat.size()));
          if (fresh) flat.push_back(f);
          pick_row.push_back(it->second);
          pick_col.push_back(s.targets[i]);
        }
    std::vector<std::vector<SpanScore>> out(rows.size());
    if (flat.empty()) {
      for (int64_t b = 0; b < B; ++b) out[b].resize(rows[b].spans.size());
      return out;
    }
    auto [picked, greedy] = m.pick_scores(h.reshape({B * T, h.size(2)}), flat, pick_row, pick_col);
    size_t k = 0;
    for (int64_t b = 0; b < B; ++b)
      for (const auto& s : rows[b].spans) {
        out[b].push_back(span_score(picked, greedy.data_ptr<int64_t>(), pick_row, k, s.targets));
        k += s.targets.size();
      }
    return out;
  });
}

std::vector<float> Transformer::full_logprobs(const std::vector<std::vector<Token>>& ids,
                                              const std::vector<std::vector<int64_t>>& mask,
                                              const std::vector<std::vector<int64_t>>& positions) {
  Impl& m = *impl_;
  for (const auto& row : ids) m.check_tokens(row);
  for (const auto& row : positions)
    for (int64_t p : row) m.check_positions(p + 1);
  if (positions.empty() && !ids.empty()) m.check_positions(static_cast<int64_t>(ids[0].size()));
  c10::InferenceMode guard;
  return guarded([&] {
    const int64_t B = static_cast<int64_t>(ids.size()), T = static_cast<int64_t>(ids[0].size());
    std::vector<int64_t> id(B * T), mk(B * T), ps(B * T);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        id[b * T + t] = ids[b][t];
        mk[b * T + t] = mask.empty() ? 1 : mask[b][t];
        ps[b * T + t] = positions.empty() ? t : positions[b][t];
      }
    if (m.invariant_path() && mask.empty() && positions.empty()) {
      std::vector<Token> flat;
      std::vector<Impl::Seq> seqs;
      for (int64_t b = 0; b < B; ++b) {
        seqs.push_back({b * T, T, -1});
        flat.insert(flat.end(), ids[b].begin(), ids[b].end());
      }
      Tensor lp = m.logprobs_invariant(m.forward_invariant(flat, seqs));
      return std::vector<float>(lp.data_ptr<float>(), lp.data_ptr<float>() + lp.numel());
    }
    Tensor ids_t = at::from_blob(id.data(), {B, T}, at::kLong).to(m.device);
    Tensor keep = at::from_blob(mk.data(), {B, T}, at::kLong).to(m.device).ne(0);
    Tensor pos = at::from_blob(ps.data(), {B, T}, at::kLong).to(m.device);
    Tensor h = m.forward(ids_t, pos, nullptr, mask.empty() ? Tensor() : keep);
    Tensor lp = at::log_softmax(m.logits(h.reshape({B * T, h.size(2)})).to(at::kFloat), -1)
                    .to(at::kCPU)
                    .contiguous();
    return std::vector<float>(lp.data_ptr<float>(), lp.data_ptr<float>() + lp.numel());
  });
}

double Transformer::activation_bytes_per_token(int64_t length) const {
  const ArchConfig& c = impl_->cfg;
  // The MLP's intermediate width per token: a mixture of experts holds, for each token, the
  // router's row, its top-k experts' gate/up rows, the gathered input and output rows and the
  // shared expert's rows (moe.cpp, Impl::moe_rows), beside the dense layers' MLP.
  double mlp = static_cast<double>(c.intermediate_size);
  if (c.moe.num_experts > 0) {
    const MoeConfig& e = c.moe;
    const double moe = static_cast<double>(e.num_experts) +
                       2.0 * static_cast<double>(e.top_k * e.expert_intermediate) +
                       2.0 * static_cast<double>(e.top_k * c.hidden_size) +
                       2.0 * static_cast<double>(e.shared_intermediate);
    mlp = std::max(mlp, moe / 2.0);
  }
  if (impl_->invariant_path())  // prefix_forward.cpp's buffers: 8 hidden-wide rows, 2 MLP-wide,
    // and the attention's gathered keys and values (2 key/value-wide)
    return 4.0 * (8.0 * c.hidden_size + 2.0 * c.num_kv_heads * c.head_dim + 2.0 * mlp);
  const double elt = impl_->dtype == at::kDouble ? 8 : (impl_->dtype == at::kFloat ? 4 : 2);
  // Live at the peak of one layer: a few hidden-sized tensors, q/k/v (expanded for GQA), the
  // MLP's intermediate tensors, and float32 attention scores and probabilities of the row.
  const double hidden = 6.0 * c.hidden_size + 4.0 * c.num_heads * c.head_dim + 3.0 * mlp;
  return elt * hidden + 4.0 * 3.0 * c.num_heads * static_cast<double>(length);
}

double Transformer::generation_slot_bytes(int64_t capacity) const {
  const ArchConfig& c = impl_->cfg;
  const double elt = impl_->dtype == at::kDouble ? 8 : (impl_->dtype == at::kFloat ? 4 : 2);
  const double kv = static_cast<double>(c.num_layers * c.num_kv_heads) *
                    static_cast<double>(c.key_head_dim() + c.value_head_dim()) * elt;
  // The step's one token per row: activation_bytes_per_token(capacity) holds its attention
  // scores over the whole capacity.
  return kv * static_cast<double>(capacity) + activation_bytes_per_token(capacity);
}

double Transformer::measure_matmul_gflops(int64_t n, int repeats) {
  Impl& m = *impl_;
  c10::InferenceMode guard;
  Tensor a = at::randn({n, n}, m.fopt()), b = at::randn({n, n}, m.fopt());
  Tensor c = at::mm(a, b);
  if (m.device.is_cuda()) torch::cuda::synchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) c = at::mm(a, b);
  if (m.device.is_cuda()) torch::cuda::synchronize();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * n * n * n * repeats / s / 1e9;
}

int64_t Transformer::free_device_memory() const {
  return 0;  // CUDA memory queries need the CUDA headers; the CUDA path probes with OOM instead
}

}  // namespace lmeval::hf
