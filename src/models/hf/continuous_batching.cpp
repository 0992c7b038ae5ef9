// Continuous batching for generation: a pool of slots, each holding one row's keys and values
// from position 0 (no padding), refilled with the next prompt as soon as its row ends. A step
// feeds one token per slot (forward_own_lengths: each row attends to its own keys only), so a
// new row joins the batch at the next step: its prompt but the last token is prefilled alone
// into its slot, and its last prompt token is fed with the other rows' tokens. Prompts sharing a
// prefix with one run before copy that prefix's keys and values instead of computing them, as
// plan_prefixes (prefix_plan.hpp) decides.
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <dlfcn.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/log.hpp"
#include "models/hf/prefix_plan.hpp"
#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

// A common prefix shorter than this is recomputed (copying saves less than it costs to find).
constexpr int64_t kMinSharedPrefix = 8;

struct Prefix {
  std::vector<Tensor> k, v;  // per layer [1, KV, tokens, hd]
};

// A slot's row: its keys so far (`len`, at positions 0..len-1) and the token fed next.
struct Slot {
  size_t row = 0;
  int64_t len = 0;
  Token feed = 0;
};

// Decoding steps whose matrix products are smaller than this (rows x hidden x widest output,
// multiply-adds) run OpenBLAS on one thread: stories260K's 64-row steps are a few hundred
// operations of microseconds each, and with the cores shared, OpenBLAS's waiting workers (they
// spin in sched_yield) took 40% of the samples and made a step 3x slower (docs/performance.md,
// "Decode step"). ATen keeps its threads: its loops over so few elements stay on one thread by
// their grain, and the fused decode attention, three quarters of such a step, splits over both
// cores (64-row IFEval-like steps 8.4 -> 5.7 ms; docs/performance.md, "Decode attention on both
// cores").
constexpr double kOneBlasThreadStepWork = 1 << 24;

// One thread for OpenBLAS (found at run time: a libtorch built with another BLAS has no
// openblas_set_num_threads, and leaves it alone) while alive; the previous count is restored
// after.
class OneBlasThread {
 public:
  OneBlasThread() {
    using Get = int (*)();
    blas_set_ = reinterpret_cast<Set>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    if (blas_set_ && get) blas_ = get();
    if (blas_set_ && blas_ > 1) blas_set_(1);
  }
  ~OneBlasThread() {
    if (blas_set_ && blas_ > 1) blas_set_(blas_);
  }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  using Set = void (*)(int);
  Set blas_set_ = nullptr;
  int blas_ = 0;
};

// transformers' greedy argmax or sampling (temperature, top-k, top-p warpers in that order)
// over logits [n, V]: the chosen ids on the CPU (the step's one transfer).
Tensor pick_tokens(Tensor lg, const SamplingOptions& opt) {
  if (!opt.do_sample) return lg.argmax(-1).to(at::kCPU);
  if (opt.temperature > 0 && opt.temperature != 1.0) lg = lg / opt.temperature;
  if (opt.top_k > 0 && opt.top_k < lg.size(-1)) {
    Tensor kth = std::get<0>(lg.topk(opt.top_k, -1)).select(-1, opt.top_k - 1).unsqueeze(-1);
    lg = lg.masked_fill(lg.lt(kth), -std::numeric_limits<float>::infinity());
  }
  if (opt.top_p < 1.0) {
    auto [sorted, order] = lg.sort(-1, /*descending=*/false);
    Tensor cum = sorted.softmax(-1).cumsum(-1);
    Tensor remove = cum.le(1.0 - opt.top_p);
    remove.select(-1, remove.size(-1) - 1).fill_(false);
    lg = lg.scatter(-1, order, sorted.masked_fill(remove, -std::numeric_limits<float>::infinity()));
  }
  return at::multinomial(lg.softmax(-1), 1).squeeze(-1).to(at::kCPU);
}

}  // namespace

std::vector<std::vector<Token>> Transformer::generate(
    const std::vector<std::vector<Token>>& prompts, const SamplingOptions& opt,
    const StopFn& stop) {
  return generate_continuous(prompts, opt, stop, Batching{});
}

std::pair<int64_t, int64_t> Transformer::prefill_tokens() const {
  return {impl_->prefill_computed, impl_->prefill_copied};
}

std::vector<std::vector<Token>> Transformer::generate_continuous(
    const std::vector<std::vector<Token>>& prompts, const SamplingOptions& opt, const StopFn& stop,
    const Batching& batching) {
  Impl& m = *impl_;
  for (const auto& p : prompts) {
    if (p.empty()) throw RuntimeError("internal: an empty prompt to generate from");
    m.check_tokens(p);
    m.check_positions(static_cast<int64_t>(p.size()));
  }
  c10::InferenceMode guard;
  return guarded([&] {
    const size_t R = prompts.size();
    std::vector<std::vector<Token>> out(R);
    if (R == 0) return out;
    const int64_t max_new = std::max<int64_t>(opt.max_new_tokens, 1);
    int64_t longest = 0;
    for (const auto& p : prompts)
      longest = std::max<int64_t>(longest, static_cast<int64_t>(p.size()));
    // Every slot holds up to the longest prompt and its generation (callers admit longest first,
    // so a refilled slot never needs more).
    const int64_t cap = longest + max_new;
    int64_t slots = batching.slots > 0 ? std::min<int64_t>(batching.slots, static_cast<int64_t>(R))
                                       : static_cast<int64_t>(R);
    if (batching.token_budget > 0)
      slots = std::max<int64_t>(1, std::min(slots, batching.token_budget / cap));
    m.check_simulated_limit(slots * cap);
    KvCache pool;
    for (int64_t l = 0; l < m.cfg.num_layers; ++l) {
      // Zeros: a step reads every slot's keys up to the longest row (masked, but multiplied).
      pool.k.push_back(at::zeros({slots, m.cfg.num_kv_heads, cap, m.cfg.key_head_dim()}, m.fopt()));
      pool.v.push_back(
          at::zeros({slots, m.cfg.num_kv_heads, cap, m.cfg.value_head_dim()}, m.fopt()));
    }
    if (m.cfg.alibi != Alibi::kNone)
      pool.pos = at::arange(0, cap, m.lopt()).unsqueeze(0).expand({slots, cap}).contiguous();
    // transformers' Phi3ForCausalLM.prepare_inputs_for_generation drops the KV cache when a
    // sequence first grows past original_max_position_embeddings, so that every key is rotated
    // with LongRoPE's long factors from then on: the row's tokens so far are run again.
    const bool recompute_at_switch =
        m.cfg.architecture == "Phi3ForCausalLM" && m.cfg.rope == RopeType::kLongRope;
    // Keys rotated for another length must not be lent (rope.hpp).
    const bool sharing =
        batching.share_prefixes && !rope_length_dependent(m.cfg) && !recompute_at_switch;
    // Kept prefixes hold at most four of the longest prompts or a quarter of the pool's tokens.
    std::vector<PrefixStep> plan;
    if (sharing) {
      std::vector<int64_t> prefill_lengths;
      for (const auto& p : prompts) prefill_lengths.push_back(static_cast<int64_t>(p.size()) - 1);
      plan = plan_prefixes(prompts, prefill_lengths, kMinSharedPrefix,
                           std::max(4 * longest, slots * cap / 4));
    }
    std::vector<std::optional<Prefix>> prefixes(sharing ? R : 0);
    if (opt.seed) at::manual_seed(*opt.seed);
    const int64_t widest = std::max({m.cfg.vocab_size, 2 * m.cfg.intermediate_size,
                                     (m.cfg.num_heads + 2 * m.cfg.num_kv_heads) * m.cfg.head_dim});
    std::optional<OneBlasThread> one_blas_thread;
    if (!m.device.is_cuda() && static_cast<double>(slots) * static_cast<double>(m.cfg.hidden_size) *
                                       static_cast<double>(widest) <
                                   kOneBlasThreadStepWork)
      one_blas_thread.emplace();

    auto slot_cache = [&](int64_t s) {
      KvCache c;
      for (int64_t l = 0; l < m.cfg.num_layers; ++l) {
        c.k.push_back(pool.k[l].narrow(0, s, 1));
        c.v.push_back(pool.v[l].narrow(0, s, 1));
      }
      if (pool.pos.defined()) c.pos = pool.pos.narrow(0, s, 1);
      return c;
    };
    // Keys and values of toks[0, n) into slot s from position 0; `length` is the sequence's
    // length for rotary frequencies that depend on it (the last prompt token is fed later).
    // `row` >= 0: prompt `row`'s admission, which copies and keeps prefixes as planned.
    auto prefill = [&](int64_t s, const std::vector<Token>& toks, int64_t n, int64_t length,
                       int64_t row) {
      KvCache c = slot_cache(s);
      const PrefixStep* step = row >= 0 && sharing ? &plan[static_cast<size_t>(row)] : nullptr;
      int64_t shared = 0;
      if (step && step->source >= 0) {
        shared = step->copy;
        const Prefix& from = *prefixes[static_cast<size_t>(step->source)];
        for (int64_t l = 0; l < m.cfg.num_layers; ++l) {
          c.k[l].narrow(2, 0, shared).copy_(from.k[l].narrow(2, 0, shared));
          c.v[l].narrow(2, 0, shared).copy_(from.v[l].narrow(2, 0, shared));
        }
      }
      c.len = shared;
      if (n > shared) {
        std::vector<int64_t> ids(toks.begin() + shared, toks.begin() + n), pos;
        for (int64_t t = shared; t < n; ++t) pos.push_back(t);
        const int64_t T = n - shared;
        const std::vector<int64_t> lengths{length};
        // Only the keys and values are kept (the last prompt token is fed with the decoding
        // steps), so the last layer stops once it stored them; not while dumping, whose
        // records cover every layer.
        m.forward(at::from_blob(ids.data(), {1, T}, at::kLong).to(m.device),
                  at::from_blob(pos.data(), {1, T}, at::kLong).to(m.device), &c, {}, &lengths, {},
                  /*cache_only=*/!debug::dump_enabled());
      }
      m.prefill_computed += n - shared;
      m.prefill_copied += shared;
      if (!step) return;
      for (const int64_t e : step->release) prefixes[static_cast<size_t>(e)].reset();
      if (step->keep > 0) {
        Prefix p;
        for (int64_t l = 0; l < m.cfg.num_layers; ++l) {
          p.k.push_back(c.k[l].narrow(2, 0, step->keep).clone());
          p.v.push_back(c.v[l].narrow(2, 0, step->keep).clone());
        }
        prefixes[static_cast<size_t>(row)] = std::move(p);
      }
    };

    static const bool profile = std::getenv("LMEVAL_HF_PROFILE") != nullptr;
    using clock = std::chrono::steady_clock;
    double prefill_s = 0, step_s = 0;
    const int64_t computed0 = m.prefill_computed, copied0 = m.prefill_copied;
    int64_t steps = 0, fed = 0;
    std::vector<std::optional<Slot>> pool_rows(static_cast<size_t>(slots));
    size_t next = 0;
    while (true) {
      // Free slots take the next prompts; then the rows are packed into slots [0, n).
      const auto t0 = clock::now();
      for (int64_t s = 0; s < slots && next < R; ++s) {
        if (pool_rows[s]) continue;
        const auto& p = prompts[next];
        const int64_t n = static_cast<int64_t>(p.size());
        prefill(s, p, n - 1, n, static_cast<int64_t>(next));
        pool_rows[s] = Slot{next, n - 1, p.back()};
        ++next;
      }
      int64_t n = 0;
      for (int64_t s = 0; s < slots; ++s) {
        if (!pool_rows[s]) continue;
        if (s != n) {  // the slot moves down into the first free one
          const int64_t len = pool_rows[s]->len;
          for (int64_t l = 0; l < m.cfg.num_layers; ++l) {
            pool.k[l][n].narrow(1, 0, len).copy_(pool.k[l][s].narrow(1, 0, len));
            pool.v[l][n].narrow(1, 0, len).copy_(pool.v[l][s].narrow(1, 0, len));
          }
          pool_rows[n] = pool_rows[s];
          pool_rows[s].reset();
        }
        ++n;
      }
      if (n == 0) break;
      const auto t1 = clock::now();
      // One token per row, each at its own position, into its own slot.
      std::vector<int64_t> ids, pos;
      KvCache step;
      for (int64_t s = 0; s < n; ++s) {
        ids.push_back(pool_rows[s]->feed);
        pos.push_back(pool_rows[s]->len);
        step.row_len.push_back(pool_rows[s]->len);
        step.prompt_len.push_back(static_cast<int64_t>(prompts[pool_rows[s]->row].size()));
      }
      for (int64_t l = 0; l < m.cfg.num_layers; ++l) {
        step.k.push_back(pool.k[l].narrow(0, 0, n));
        step.v.push_back(pool.v[l].narrow(0, 0, n));
      }
      Tensor h = m.forward(at::from_blob(ids.data(), {n, 1}, at::kLong).to(m.device),
                           at::from_blob(pos.data(), {n, 1}, at::kLong).to(m.device), &step, {});
      const Tensor next_ids = pick_tokens(m.logits(h.select(1, 0)).to(at::kFloat), opt);
      const int64_t* nx = next_ids.data_ptr<int64_t>();
      ++steps;
      fed += n;
      for (int64_t s = 0; s < n; ++s) {
        Slot& r = *pool_rows[s];
        ++r.len;
        const Token tok = static_cast<Token>(nx[s]);
        std::vector<Token>& gen = out[r.row];
        gen.push_back(tok);
        const bool done =
            std::find(opt.eos_ids.begin(), opt.eos_ids.end(), tok) != opt.eos_ids.end() ||
            (stop && stop(r.row, gen)) || static_cast<int64_t>(gen.size()) >= max_new;
        if (done) {
          if (batching.finished) batching.finished(r.row, gen);
          pool_rows[s].reset();
          continue;
        }
        m.check_positions(r.len + 1);
        r.feed = tok;
        if (recompute_at_switch && r.len == m.cfg.rope_original_max_positions) {
          std::vector<Token> all = prompts[r.row];
          all.insert(all.end(), gen.begin(), gen.end() - 1);
          prefill(s, all, r.len, r.len + 1, -1);
        }
      }
      if (profile) {
        if (m.device.is_cuda()) torch::cuda::synchronize();
        prefill_s += std::chrono::duration<double>(t1 - t0).count();
        step_s += std::chrono::duration<double>(clock::now() - t1).count();
      }
    }
    if (profile)
      log::info(
          "hf profile: generate " + std::to_string(R) + " rows in " + std::to_string(slots) +
          " slots: prefill " + std::to_string(prefill_s * 1e3) + " ms (" +
          std::to_string(m.prefill_computed - computed0) + " tokens computed, " +
          std::to_string(m.prefill_copied - copied0) + " copied), " + std::to_string(steps) +
          " steps of " +
          std::to_string(steps ? static_cast<double>(fed) / static_cast<double>(steps) : 0.0) +
          " rows, " + std::to_string(steps ? step_s * 1e3 / static_cast<double>(steps) : 0.0) +
          " ms/step");
    return out;
  });
}

}  // namespace lmeval::hf
