// HFLM over the libtorch Transformer: request encoding, the Collator's ordering and grouping,
// token-budget batches, rolling windows and generation (reference: lm_eval/models/huggingface.py).
#include "models/hf/hf_lm.hpp"
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/models/gen_kwargs.hpp"
#include "lmeval/models/hf/hf_model.hpp"
#include "lmeval/models/hf/transformers_path.hpp"
#include "lmeval/models/model_args.hpp"
#include "lmeval/models/rolling_windows.hpp"
#include "lmeval/models/special_tokens.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/generation.hpp"
#include "models/hf/gguf_tokenizer.hpp"
#include "models/hf/python_model.hpp"
#include "models/hf/seq2seq_lm.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

// The n_positions / max_position_embeddings default of transformers' config class for each
// architecture (its ArchSpec).
static std::optional<int64_t> config_class_max_positions(const std::string& architecture) {
  const ArchSpec* spec = find_arch(architecture);
  return spec && spec->default_max_positions > 0
             ? std::optional<int64_t>(spec->default_max_positions)
             : std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Construction

namespace {

int64_t available_memory_bytes();

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(int64_t{1} << 30));
  return buf;
}

// What bounds this process's memory: what the system has available, and an address-space limit
// (ulimit -v) when one is set.
std::string memory_limits() {
  std::string out = gib(static_cast<double>(available_memory_bytes())) + " available";
  rlimit lim{};
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    out += ", address space limited to " + gib(static_cast<double>(lim.rlim_cur)) + " (ulimit -v)";
  return out;
}

// Loading ran out of memory (libtorch's "DefaultCPUAllocator: can't allocate memory", CUDA's
// "out of memory", std::bad_alloc): the model does not fit, said with the sizes and what helps,
// where the run ended with the allocator's own words as an internal error.
[[noreturn]] void model_does_not_fit(const fs::path& dir, const LoadOptions& lo) {
  double files = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors" || e.path().extension() == ".bin")
      files += static_cast<double>(e.file_size(ec));
  const bool cuda = lo.device.rfind("cuda", 0) == 0;
  throw RuntimeError(
      "the model in " + dir.string() + " does not fit in " +
      (cuda ? "the GPU's" : "this machine's") + " memory: loading its weights (" + gib(files) +
      " of checkpoint files, as dtype " + (lo.dtype.empty() ? std::string("auto") : lo.dtype) +
      " on " + lo.device + ") ran out of it" +
      (cuda ? std::string() : " (" + memory_limits() + ")") +
      " (expected a model that fits: dtype=bfloat16 takes half of float32's memory; or a "
      "machine or device with more memory; or serve the model elsewhere and evaluate it with "
      "local-completions)");
}

}  // namespace

// A folder named by pretrained= or delta=: a local folder as is, anything else a Hub repo id,
// fetched into (or found in) the Hugging Face cache. `subfolder` is inside either.
fs::path model_folder(const std::string& name, const std::string& revision,
                      const std::string& subfolder, const std::string& key) {
  if (fs::is_directory(name)) {
    const fs::path dir = subfolder.empty() ? fs::path(name) : fs::path(name) / subfolder;
    if (!fs::is_directory(dir))
      throw UserError("subfolder '" + subfolder + "' is not a folder of " + name,
                      {dir.string(), 0, 0, "--model_args subfolder"},
                      "a folder inside pretrained that holds the model");
    return dir;
  }
  if (fs::exists(name) || name.rfind("/", 0) == 0 || name.rfind(".", 0) == 0)
    throw UserError(key + "='" + name + "' is not a model folder",
                    {name, 0, 0, "--model_args " + key},
                    "a Hugging Face model folder or a Hub repo id such as EleutherAI/pythia-160m");
  return hub::resolve_model_dir(name, revision, subfolder);
}

namespace {

// gguf_file=: HFLM passes it to from_pretrained, which finds it inside pretrained; the config and
// the weights come from it (gguf_model.hpp), the tokenizer from tokenizer= or else from its
// metadata (gguf_tokenizer.hpp). Empty without one.
fs::path gguf_path(const HfArgs& args) {
  if (args.gguf_file.empty()) return {};
  const std::string key = "--model_args gguf_file";
  if (!fs::is_directory(args.pretrained))
    throw UserError(
        "gguf_file needs pretrained to be a local folder; lm-eval does not fetch GGUF "
        "files from the Hub",
        {args.pretrained, 0, 0, "--model_args pretrained"},
        "the folder holding the GGUF file (hf download REPO FILE --local-dir DIR, "
        "then pretrained=DIR)");
  const fs::path dir = args.subfolder.empty() ? fs::path(args.pretrained)
                                              : fs::path(args.pretrained) / args.subfolder;
  const fs::path p = dir / args.gguf_file;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    throw UserError("gguf_file '" + args.gguf_file + "' is not a file in " + dir.string(),
                    {p.string(), 0, 0, key},
                    "the name of a GGUF file inside the pretrained folder");
  if (!args.peft.empty() || !args.delta.empty())
    throw UserError(
        std::string(args.peft.empty() ? "delta" : "peft") +
            " is not applied to a GGUF model by lm-eval",
        {p.string(), 0, 0, args.peft.empty() ? "--model_args delta" : "--model_args peft"},
        "gguf_file without peft or delta");
  if (args.backend == "seq2seq")
    throw UserError("backend=seq2seq with gguf_file: lm-eval reads decoder-only GGUF models only",
                    {p.string(), 0, 0, "--model_args backend"}, "backend=default or causal");
  return p;
}

}  // namespace

HFLM::HFLM(const HfArgs& args) : args_(args) {
  const std::string revision = args.revision.empty() ? "main" : args.revision;
  const fs::path gguf = gguf_path(args);
  const fs::path dir = model_folder(args.pretrained, revision, args.subfolder, "pretrained");
  LoadOptions lo = hf_load_options(args);
  // HFLM._create_model passes its revision (not its subfolder) to PeftModel.from_pretrained and to
  // the delta's from_pretrained.
  if (!args.peft.empty()) lo.weights.peft = hub::resolve_adapter_dir(args.peft, revision);
  if (!args.delta.empty()) lo.weights.delta = model_folder(args.delta, revision, "", "delta");
  lo.weights.dtype = args.dtype;
  lo.weights.gguf = gguf;
  const fs::path tokenizer_dir = hf_tokenizer_folder(args, dir);
  // HFLM._create_tokenizer passes gguf_file to AutoTokenizer when tokenizer= is not given.
  auto load_model_tokenizer = [&] {
    return !gguf.empty() && args.tokenizer.empty() ? gguf_tokenizer(GgufFile(gguf))
                                                   : load_tokenizer(tokenizer_dir);
  };
  // What lm-eval cannot run itself runs through transformers (transformers_path.hpp).
  transformers_reason_ = transformers_path_reason(args, dir);
  if (transformers_reason_) {
    tokenizer_ = load_model_tokenizer();
    // The adapter as lm-eval fetched it (a Hub id resolved by its own client).
    HfArgs python_args = args;
    if (!lo.weights.peft.empty()) python_args.peft = lo.weights.peft.string();
    model_ = PythonModel::load(dir, python_args, *transformers_reason_,
                               static_cast<int64_t>(tokenizer_->vocab_size()));
  } else {
    try {
      model_ = load_native_model(dir, lo);
    } catch (const std::bad_alloc&) {
      model_does_not_fit(dir, lo);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      if (what.find("can't allocate memory") == std::string::npos &&
          what.find("out of memory") == std::string::npos)
        throw;
      model_does_not_fit(dir, lo);
    }
    tokenizer_ = load_model_tokenizer();
  }
  // transformers_model.py resizes them as HFLM does.
  if (!transformers_reason_ && !args.peft.empty() &&
      static_cast<int64_t>(tokenizer_->vocab_size()) != model_->config().vocab_size)
    // HFLM._create_model calls resize_token_embeddings(len(tokenizer)) before the adapter:
    // rows cut off, or new rows drawn at random. lm-eval keeps the model's rows.
    log::warn("hf: the model has " + std::to_string(model_->config().vocab_size) +
              " embedding rows and the tokenizer " + std::to_string(tokenizer_->vocab_size()) +
              " tokens; the reference resizes the embeddings to the tokenizer before applying an "
              "adapter, lm-eval does not (docs/fidelity.md)");
  const ArchConfig& cfg = model_->config();

  // max_length (spec §6.3): resolve_max_length reads n_positions / max_position_embeddings /
  // n_ctx from the model's config object, where transformers' config class fills its own default
  // when config.json leaves the field out; so the tokenizer's model_max_length (whatever it
  // holds, a negative number included) is consulted only for an architecture without one.
  max_length_ = hf_max_length(args, cfg.max_position_embeddings,
                              config_class_max_positions(cfg.architecture), *tokenizer_);
  ids_ = hf_token_ids(args, *tokenizer_, dir, cfg.eos_token_id);

  if (args.batch_size.empty() || args.batch_size.rfind("auto", 0) == 0) {
    auto_batch_ = true;
    // auto:N re-detects the batch size N times over a run (the reference's batch_schedule).
    if (args.batch_size.rfind("auto:", 0) == 0)
      auto_schedule_ = std::max<int64_t>(1, std::stoll(args.batch_size.substr(5)));
  } else {
    auto_batch_ = false;
    fixed_rows_ = std::stoll(args.batch_size);
  }
  log::info("hf: loaded " + args.pretrained + " (" + cfg.architecture + ", " +
            std::to_string(model_->num_parameters()) + " parameters, " + model_->dtype_name() +
            ", " + (model_->on_cuda() ? "cuda" : "cpu") + "), max_length " +
            std::to_string(max_length_) + "; " + execution_line());
}

bool HFLM::prepare_adapters(const std::vector<std::string>& adapters) {
  if (args_.peft.empty() || !model_->switches_adapters()) return false;
  // HFLM._create_model's revision for each adapter, as for the one it loads. Every adapter is
  // checked before the first runs, so that a long run does not stop at its last adapter.
  const std::string revision = args_.revision.empty() ? "main" : args_.revision;
  adapters_.clear();
  std::vector<fs::path> dirs;
  for (const auto& a : adapters) {
    dirs.push_back(hub::resolve_adapter_dir(a, revision));
    // One that peft must apply needs a model of its own, built by transformers.
    if (auto why = adapter_reason(dirs.back())) {
      log::info("hf: adapter " + a + " has " + *why +
                ", so each adapter's run builds its own model");
      return false;
    }
  }
  for (size_t i = 0; i < adapters.size(); ++i) {
    model_->check_adapter(dirs[i]);
    adapters_.emplace_back(adapters[i], dirs[i]);
  }
  active_adapter_ = 0;
  log::info("hf: base model loaded once for " + std::to_string(adapters.size()) +
            " adapters (each adapter's tensors merged in turn)");
  return true;
}

void HFLM::use_adapter(size_t i) {
  if (i >= adapters_.size())
    throw RuntimeError("hf: adapter " + std::to_string(i + 1) + " of " +
                       std::to_string(adapters_.size()) + " was not prepared");
  if (i != active_adapter_ || adapters_[i].first != args_.peft) {
    model_->switch_adapter(adapters_[i].second);
    active_adapter_ = i;
    args_.peft = adapters_[i].first;
    log::info("hf: switched to adapter " + args_.peft);
  }
  // Each run's throughput is its own, as a model built for it would count.
  phases_.clear();
}

// The one log line's account of which path runs the model, and why.
std::string HFLM::execution_line() const {
  if (!transformers_reason_) return "runs natively (lm-eval's own forward pass)";
  const auto* py = dynamic_cast<const PythonModel*>(model_.get());
  return "runs through transformers in the embedded Python (" +
         (py ? py->interpreter() : std::string()) + "): " + *transformers_reason_;
}

Json HFLM::model_info() const {
  Json j = hf_model_info(model_->num_parameters(), model_->dtype_name(), args_.revision);
  // HFLM.get_model_info: the Hub's sha of each, "" when the Hub does not answer (a local folder).
  if (!args_.peft.empty()) j["peft_sha"] = "";
  if (!args_.delta.empty()) j["delta_sha"] = "";
  // Which path ran the model, recorded after the reference's keys in the results' config
  // (docs/models.md).
  j["hf_execution"] = transformers_reason_
                          ? Json{{"path", "transformers"}, {"reason", *transformers_reason_}}
                          : Json{{"path", "native"}};
  return j;
}

std::optional<TokenizerInfo> HFLM::tokenizer_info() const {
  return hf_tokenizer_info(*tokenizer_, ids_.pad, ids_.eot, max_length_);
}

std::optional<std::string> HFLM::chat_template(const std::string& name) const {
  return named_chat_template(*tokenizer_, name);
}

Json HFLM::chat_template_variables() const { return chat_template_special_tokens(*tokenizer_); }

// ---------------------------------------------------------------------------------------------
// Encoding (spec §6.4)

std::vector<Token> HFLM::tok_encode(const std::string& text, std::optional<bool> add_special_tokens,
                                    size_t left_truncate_len) const {
  std::vector<Token> ids = tokenizer_->encode(
      text, hf_add_special_tokens(text, add_special_tokens, args_.add_bos_token, ids_.prefix_text));
  if (left_truncate_len && ids.size() > left_truncate_len)
    ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(left_truncate_len));
  return ids;
}

TokenPair HFLM::encode_request(const LoglikelihoodRequest& r) const {
  if (r.context.empty()) return empty_context_pair(tok_encode(r.continuation, false), ids_.prefix);
  // _encode_pair: trailing whitespace of the context moves to the continuation, and the
  // continuation's ids come from the joint encoding.
  const auto [context, continuation] = move_trailing_whitespace(r.context, r.continuation);
  std::vector<Token> whole = tok_encode(context + continuation);
  std::vector<Token> ctx = tok_encode(context);
  std::vector<Token> cont;
  if (whole.size() > ctx.size())
    cont.assign(whole.begin() + static_cast<std::ptrdiff_t>(ctx.size()), whole.end());
  return {ctx, cont};
}

// ---------------------------------------------------------------------------------------------
// Batching

namespace {

int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (in >> key >> value >> unit)
    if (key == "MemAvailable:") return value * 1024;
  return int64_t{4} << 30;
}

// The CPU's memory for one forward pass or one generation's pool: a share of what is available.
double cpu_budget_bytes() {
  return std::min<double>(0.3 * static_cast<double>(available_memory_bytes()), 8.0 * (1LL << 30));
}

}  // namespace

// Rows × length allowed in one forward pass.
int64_t HFLM::token_budget(int64_t length) {
  length = std::max<int64_t>(length, 1);
  if (!auto_batch_)
    return std::max<int64_t>(1, static_cast<int64_t>(fixed_rows_ * length * oom_shrink_));
  if (model_->on_cuda()) {
    if (detected_rows_ == 0) {
      // Probe with the longest batch: from max_batch_size rows, halve on out-of-memory.
      int64_t rows = args_.max_batch_size;
      while (rows > 1) {
        try {
          ScoreRow r{std::vector<Token>(static_cast<size_t>(length), 1),
                     {ScoreSpan{length - 1, {1}}}};
          model_->score(std::vector<ScoreRow>(static_cast<size_t>(rows), r));
          break;
        } catch (const OutOfMemory&) {
          rows /= 2;
        }
      }
      detected_rows_ = rows;
      batch_sizes_.push_back(static_cast<int>(rows));
      log::info("hf: determined largest batch size: " + std::to_string(rows));
    }
    // At least kDeviceTokens tokens per forward pass: the probe's max_batch_size rows of a short
    // task leave a large GPU mostly idle; an out-of-memory halves the budget (oom_shrink_).
    constexpr int64_t kDeviceTokens = 32768;
    return std::max<int64_t>(
        1,
        static_cast<int64_t>(static_cast<double>(std::max(detected_rows_ * length, kDeviceTokens)) *
                             oom_shrink_));
  }
  // CPU: a share of the available memory, and no more tokens than keep the matmuls busy.
  const double per_token = model_->activation_bytes_per_token(length);
  int64_t tokens = static_cast<int64_t>(cpu_budget_bytes() / per_token);
  tokens = std::min<int64_t>(tokens, 8192);
  tokens = std::min<int64_t>(tokens, args_.max_batch_size * length);
  tokens = static_cast<int64_t>(static_cast<double>(tokens) * oom_shrink_);
  return std::max<int64_t>(tokens, length);
}

Json HFLM::performance_stats() const { return phases_.json(); }

void HFLM::report(size_t done, size_t total, int64_t tokens) {
  if (progress_) progress_(done, total, tokens);
}

std::vector<LoglikelihoodResult> HFLM::loglikelihood_tokens(const std::vector<TokenPair>& reqs,
                                                            const char* phase_name,
                                                            const ScoredFn& scored) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<LoglikelihoodResult> results(reqs.size());
  const int64_t L = max_length_;
  // Requests become prefix trees. A request whose context + continuation fits in max_length + 1
  // tokens is a branch (its continuation minus the last token) of the tree of its context, so a
  // multiple-choice context runs once for all choices. A longer one is left-truncated as the
  // reference does, inp = (ctx + cont)[-(L+1):][:-1], and runs as a tree of its own. With
  // logits_cache, requests with the same ctx + cont[:-1] share one branch (the reference's
  // one-token grouping). Scores do not depend on the grouping (kernels.hpp), only speed does.
  struct Branch {
    std::vector<Token> tokens;
    std::vector<size_t> members;
  };
  struct Tree {
    std::vector<Token> prefix;
    std::vector<Branch> branches;
    std::map<std::vector<Token>, size_t> branch_of;
    int64_t longest = 0;  // longest sequence: prefix + branch
    int64_t cost = 0;     // tokens fed (prefix once when shared, else once per branch)
  };
  std::vector<Tree> trees;
  std::map<std::vector<Token>, size_t> tree_of;
  const bool share = prefix_sharing_ && model_->shares_prefixes();
  for (size_t i = 0; i < reqs.size(); ++i) {
    const auto& [ctx, cont] = reqs[i];
    if (cont.empty()) {  // nothing to score
      results[i] = {0.0, true};
      continue;
    }
    check_continuation_length(cont.size(), L);
    std::vector<Token> toks = ctx;
    toks.insert(toks.end(), cont.begin(), cont.end());
    const bool fits = toks.size() <= static_cast<size_t>(L + 1);
    if (!fits && !warned_truncation_) {
      warned_truncation_ = true;
      log::warn("hf: a request of " + std::to_string(toks.size()) +
                " tokens is longer than max_length " + std::to_string(L) +
                "; its context is truncated on the left (as the reference does)");
    }
    std::vector<Token> prefix, branch;
    if (share && fits && !ctx.empty()) {
      prefix = ctx;
      branch.assign(cont.begin(), cont.end() - 1);
    } else {
      const size_t from = fits ? 0 : toks.size() - static_cast<size_t>(L + 1);
      prefix.assign(toks.begin() + static_cast<std::ptrdiff_t>(from), toks.end() - 1);
    }
    size_t ti;
    if (share && fits && !ctx.empty()) {
      auto [it, fresh] = tree_of.emplace(prefix, trees.size());
      if (fresh) trees.push_back({prefix, {}, {}, 0, 0});
      ti = it->second;
    } else if (args_.logits_cache) {
      auto [it, fresh] = tree_of.emplace(prefix, trees.size());
      if (fresh) trees.push_back({prefix, {}, {}, 0, 0});
      ti = it->second;
    } else {
      ti = trees.size();
      trees.push_back({prefix, {}, {}, 0, 0});
    }
    Tree& t = trees[ti];
    size_t bi;
    auto found = args_.logits_cache ? t.branch_of.find(branch) : t.branch_of.end();
    if (found != t.branch_of.end()) {
      bi = found->second;
    } else {
      bi = t.branches.size();
      if (args_.logits_cache) t.branch_of.emplace(branch, bi);
      t.branches.push_back({branch, {}});
      const int64_t P = static_cast<int64_t>(t.prefix.size()),
                    n = static_cast<int64_t>(branch.size());
      t.longest = std::max(t.longest, P + n);
      t.cost = share ? (t.cost == 0 ? P : t.cost) + n : t.cost + P + n;
    }
    t.branches[bi].members.push_back(i);
  }
  // Longest first (the reference's order; with invariant scores it only shapes the batches).
  std::vector<size_t> order(trees.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (trees[a].longest != trees[b].longest) return trees[a].longest > trees[b].longest;
    return trees[a].prefix < trees[b].prefix;
  });
  Phase& ph = phase(phase_name);
  size_t done = reqs.size();
  for (const auto& t : trees)
    for (const auto& b : t.branches) done -= b.members.size();
  int64_t tokens_done = 0;
  size_t pos = 0;
  int64_t segment = -1;
  while (pos < order.size()) {
    // auto:N: the sorted work is cut into N equal parts; each part starts with a new detection
    // for its longest batch (kept when the previous one was already max_batch_size, as the
    // reference does). Plain auto is one part.
    bool new_segment = false;
    if (auto_batch_) {
      const int64_t seg =
          static_cast<int64_t>(pos) * auto_schedule_ / static_cast<int64_t>(order.size());
      if (seg != segment) {
        new_segment = true;
        if (segment >= 0 && model_->on_cuda() && detected_rows_ < args_.max_batch_size)
          detected_rows_ = 0;
        segment = seg;
      }
    }
    const int64_t T = trees[order[pos]].longest;
    const int64_t budget = token_budget(T);
    const int64_t max_rows =
        auto_batch_ ? std::numeric_limits<int64_t>::max()
                    : std::max<int64_t>(1, static_cast<int64_t>(fixed_rows_ * oom_shrink_));
    size_t end = pos;
    int64_t cost = 0, rows_in = 0;
    while (end < order.size()) {
      const Tree& t = trees[order[end]];
      const int64_t c =
          share ? t.cost : T * static_cast<int64_t>(t.branches.size());  // padded rows
      const int64_t r = static_cast<int64_t>(t.branches.size());
      if (end > pos && (cost + c > budget || rows_in + r > max_rows)) break;
      cost += c;
      rows_in += r;
      ++end;
    }
    // Each auto:N part records the rows of its longest length that the budget allows (at most
    // max_batch_size, what the reference's probe finds on a CPU) as config.batch_sizes, once
    // per run as the reference's batch_sizes dict (on CUDA the probe records its result).
    if (new_segment && !model_->on_cuda() && static_cast<int64_t>(batch_sizes_.size()) <= segment)
      batch_sizes_.push_back(static_cast<int>(
          std::min<int64_t>(args_.max_batch_size, std::max<int64_t>(1, budget / T))));
    std::vector<ScoreTree> batch;
    int64_t batch_tokens = 0;
    for (size_t k = pos; k < end; ++k) {
      const Tree& t = trees[order[k]];
      ScoreTree st{t.prefix, {}};
      const int64_t P = static_cast<int64_t>(t.prefix.size());
      for (const auto& b : t.branches) {
        ScoreRow row{b.tokens, {}};
        const int64_t inplen = P + static_cast<int64_t>(b.tokens.size());
        for (size_t m : b.members) {
          const auto& cont = reqs[m].second;
          row.spans.push_back({inplen - static_cast<int64_t>(cont.size()), cont});
        }
        st.branches.push_back(std::move(row));
      }
      batch_tokens += t.cost;
      batch.push_back(std::move(st));
    }
    std::vector<std::vector<std::vector<SpanScore>>> scores;
    try {
      scores = model_->score_trees(batch);
    } catch (const OutOfMemory& e) {
      if (end - pos <= 1)
        throw RuntimeError(std::string("out of memory on a batch of one request: ") + e.what());
      oom_shrink_ /= 2;  // retry the same work with smaller batches
      log::warn("hf: out of memory; retrying with half the batch");
      continue;
    }
    for (size_t k = pos; k < end; ++k) {
      const Tree& t = trees[order[k]];
      for (size_t bi = 0; bi < t.branches.size(); ++bi)
        for (size_t j = 0; j < t.branches[bi].members.size(); ++j) {
          const SpanScore& s = scores[k - pos][bi][j];
          const size_t member = t.branches[bi].members[j];
          results[member] = {s.logprob, s.is_greedy};
          if (scored) scored(member, results[member]);
          ++done;
        }
    }
    tokens_done += batch_tokens;
    ph.fed_tokens += batch_tokens;
    ph.max_batch_tokens = std::max(ph.max_batch_tokens, batch_tokens);
    pos = end;
    report(done, reqs.size(), tokens_done);
  }
  ph.requests += reqs.size();
  // The stats count the tokens the requests hold (each request's input, as an unshared backend
  // feeds it), so that they add up over --shard parts; fed_tokens is what ran after sharing.
  for (const auto& [ctx, cont] : reqs)
    if (!cont.empty())
      ph.tokens += std::min<int64_t>(L, static_cast<int64_t>(ctx.size() + cont.size()) - 1);
  ph.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // NaN scores are kept as the reference keeps them (multiple choice then picks the first NaN
  // choice, as numpy's argmax does), but not silently: they mean the forward pass overflowed or
  // the config is broken, and the metrics computed from them mean nothing.
  const auto nans = std::count_if(results.begin(), results.end(),
                                  [](const auto& r) { return std::isnan(r.loglikelihood); });
  if (nans > 0)
    log::warn("hf: " + std::to_string(nans) + " of " + std::to_string(results.size()) + " " +
              phase_name +
              " scores are NaN: the model's forward pass produced NaN or infinite values (check "
              "config.json's norm epsilon and rope_theta, the weights, and the dtype); metrics "
              "computed from them are meaningless");
  return results;
}

std::vector<LoglikelihoodResult> HFLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  std::vector<TokenPair> enc;
  enc.reserve(requests.size());
  for (const auto& r : requests) enc.push_back(encode_request(r));
  return loglikelihood_tokens(enc, "loglikelihood",
                              [this](size_t i, const LoglikelihoodResult& r) { answered(i, r); });
}

std::vector<double> HFLM::loglikelihood_rolling(const std::vector<std::string>& texts) {
  std::vector<TokenPair> windows;
  std::vector<size_t> owner;
  for (size_t i = 0; i < texts.size(); ++i) {
    for (auto& w : rolling_windows(tok_encode(texts[i]), ids_.prefix, max_length_)) {
      windows.push_back(std::move(w));
      owner.push_back(i);
    }
  }
  // A text's answer is final once its last window is scored (windows run sorted by length, not
  // in order): it is handed out then, so a stop keeps every finished text, not only whole calls.
  std::vector<size_t> first(texts.size(), 0), left(texts.size(), 0);
  for (size_t k = windows.size(); k-- > 0;) {
    first[owner[k]] = k;
    ++left[owner[k]];
  }
  std::vector<double> window_score(windows.size(), 0.0);
  // Summed in window order, as Python's sum over the windows' floats.
  auto sum_of = [&](size_t i) {
    double s = 0.0;
    for (size_t k = first[i]; k < windows.size() && owner[k] == i; ++k) s += window_score[k];
    return s;
  };
  loglikelihood_tokens(windows, "loglikelihood_rolling",
                       [&](size_t k, const LoglikelihoodResult& r) {
                         window_score[k] = r.loglikelihood;
                         if (--left[owner[k]] == 0) answered_rolling(owner[k], sum_of(owner[k]));
                       });
  std::vector<double> out(texts.size(), 0.0);
  for (size_t i = 0; i < texts.size(); ++i) out[i] = sum_of(i);
  return out;
}

// ---------------------------------------------------------------------------------------------
// generate_until (spec §6.8)

// generate_until's pieces, shared with the seq2seq backend (generation.hpp).

// Collator(group_by="gen_kwargs"): groups in order of first appearance, keyed by the gen_kwargs
// with sorted keys.
std::vector<std::vector<size_t>> group_by_gen_kwargs(const std::vector<GenerationRequest>& reqs) {
  std::vector<std::vector<size_t>> groups;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < reqs.size(); ++i) {
    nlohmann::json sorted =
        nlohmann::json::parse(reqs[i].gen_kwargs.is_null() ? "{}" : reqs[i].gen_kwargs.dump());
    auto [it, fresh] = index.emplace(sorted.dump(), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

// _model_generate's arguments: the normalised gen_kwargs plus top_p / top_k passed through.
SamplingOptions sampling_options(const gen_kwargs::HfGenKwargs& g, const Json& kw,
                                 const std::vector<Token>& eos_ids, Token pad_id,
                                 const std::optional<int64_t>& seed) {
  SamplingOptions so;
  so.max_new_tokens = g.max_gen_toks;
  so.eos_ids = eos_ids;
  so.pad_id = pad_id;
  so.do_sample = g.do_sample;
  so.temperature = g.temperature > 0 ? g.temperature : 1.0;
  if (kw.contains("top_p") && kw["top_p"].is_number()) so.top_p = kw["top_p"].get<double>();
  if (kw.contains("top_k") && kw["top_k"].is_number()) so.top_k = kw["top_k"].get<int64_t>();
  if (g.do_sample) {
    // transformers' sampling warpers raise for these (TemperatureLogitsWarper, TopKLogitsWarper,
    // TopPLogitsWarper) instead of sampling with other settings than the ones asked for.
    auto refuse = [](const char* key, const std::string& value, const char* expected) {
      throw UserError(std::string(key) + "=" + value + " cannot be sampled with",
                      {"", 0, 0, std::string("generation_kwargs.") + key}, expected);
    };
    if (kw.contains("temperature") && kw["temperature"].is_number() && g.temperature <= 0)
      refuse("temperature", kw["temperature"].dump(),
             "a temperature above 0 with do_sample=true (or do_sample=false for greedy decoding)");
    if (so.top_k < 0) refuse("top_k", std::to_string(so.top_k), "top_k of 0 (off) or more");
    if (so.top_p < 0) refuse("top_p", kw["top_p"].dump(), "top_p from 0 to 1");
  }
  so.seed = seed ? std::optional<uint64_t>(static_cast<uint64_t>(*seed)) : std::nullopt;
  return so;
}

// stop_sequences_criteria: a row stops once the decoded tail of its generation (each stop
// string's token length + 2 tokens) contains a stop string.
StopFn stop_criteria(const Tokenizer& tok, const std::vector<std::string>& until) {
  std::vector<std::pair<std::string, size_t>> stops;  // stop string, lookback tokens
  for (const auto& s : until) stops.push_back({s, tok.encode(s, false).size() + 2});
  return [&tok, stops](size_t, const std::vector<Token>& gen) {
    for (const auto& [s, look] : stops) {
      const size_t n = std::min(gen.size(), look);
      std::string tail = tok.decode(std::span<const Token>(gen.data() + gen.size() - n, n), false);
      if (tail.find(s) != std::string::npos) return true;
    }
    return false;
  };
}

// HFLM.generate_until's text of one generation: a think_end_token given as a token id drops
// everything up to its last occurrence before decoding, one given as text everything up to its
// last occurrence after; then the text is cut at the first occurrence of each stop string in turn.
std::string generation_text(const Tokenizer& tok, std::vector<Token> toks,
                            const std::optional<std::string>& think_end_token,
                            const std::vector<std::string>& until) {
  std::string text;
  if (think_end_token && !think_end_token->empty() &&
      std::all_of(think_end_token->begin(), think_end_token->end(), ::isdigit)) {
    const Token think = static_cast<Token>(std::stoll(*think_end_token));
    auto it = std::find(toks.rbegin(), toks.rend(), think);
    const bool found = it != toks.rend();
    if (found) toks.erase(toks.begin(), it.base());
    text = tok.decode(toks, true);
    if (found) text = std::string(unicode::py_lstrip(text));
  } else {
    text = tok.decode(toks, true);
    if (think_end_token && !think_end_token->empty()) {
      const auto at = text.rfind(*think_end_token);
      if (at != std::string::npos)
        text = std::string(unicode::py_lstrip(text.substr(at + think_end_token->size())));
    }
  }
  for (const auto& s : until) {
    if (s.empty()) continue;
    const auto at = text.find(s);
    if (at != std::string::npos) text.resize(at);
  }
  return text;
}

std::vector<std::string> HFLM::generate_until(const std::vector<GenerationRequest>& requests) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> out(requests.size());
  const std::string eos_text =
      ids_.eot ? tokenizer_->decode(std::vector<Token>{*ids_.eot}, false) : std::string();
  Phase& ph = phase("generate_until");
  GenerationProgress progress{0, 0, requests.size()};
  for (const auto& members : group_by_gen_kwargs(requests)) {
    // All requests of a group share their gen_kwargs (the reference reads all_gen_kwargs[0]).
    const Json& kw = requests[members[0]].gen_kwargs;
    generate_group(requests, members,
                   gen_kwargs::normalize_for_hf(kw, kHfDefaultMaxGenToks, eos_text), kw, out,
                   progress);
  }
  ph.requests += requests.size();
  ph.tokens += progress.tokens;
  ph.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::vector<size_t> HFLM::by_context_length(const std::vector<GenerationRequest>& requests,
                                            const std::vector<size_t>& members,
                                            std::vector<int64_t>& lengths) const {
  return hf::by_context_length(
      requests, members, [this](const std::string& c) { return tok_encode(c); }, lengths);
}

std::optional<bool> HFLM::batch_special_tokens(const std::string& first_context) const {
  // tok_batch_encode: the batch's first context decides whether special tokens are added.
  const std::string& bos_text = tokenizer_->bos_token().text;
  if (!bos_text.empty() && first_context.rfind(bos_text, 0) == 0) return false;
  if (args_.add_bos_token) return *args_.add_bos_token;
  return true;
}

void HFLM::generate_group(const std::vector<GenerationRequest>& requests,
                          const std::vector<size_t>& members, const gen_kwargs::HfGenKwargs& g,
                          const Json& kw, std::vector<std::string>& out,
                          GenerationProgress& progress) {
  const int64_t max_gen = g.max_gen_toks;
  const int64_t max_ctx_len = max_length_ - max_gen;
  if (max_ctx_len <= 0)
    // HFLM.generate_until asserts the same (no truncation rescues it): e.g. leaderboard_ifeval's
    // max_gen_toks 1280 on a 512-token model stops the reference too.
    throw UserError(
        "requested max tokens to generate (max_gen_toks " + std::to_string(max_gen) +
            ") must be less than the model's maximum sequence length (max_length " +
            std::to_string(max_length_) + ")",
        {"", 0, 0, "max_gen_toks"},
        "max_gen_toks < max_length: lower it with --gen_kwargs max_gen_toks=N, or raise "
        "--model_args max_length=N if the model supports longer sequences");
  if (max_gen <= 0)
    // transformers' generate raises when the input is not shorter than its max_length, which
    // HFLM sets to the context length + max_gen_toks.
    throw UserError("max_gen_toks " + std::to_string(max_gen) + " leaves nothing to generate",
                    {"", 0, 0, "max_gen_toks"}, "max_gen_toks of at least 1");
  std::vector<int64_t> lengths;
  const std::vector<size_t> order = by_context_length(requests, members, lengths);
  const SamplingOptions so = sampling_options(g, kw, ids_.eos, ids_.pad.value_or(0), args_.seed);
  const StopFn stop = stop_criteria(*tokenizer_, g.until);
  // Prompts are tokenized in the batches of the static schedule: a batch's first context
  // decides whether special tokens are added (tok_batch_encode). Returns the batch's end.
  std::vector<std::vector<Token>> prompts(order.size());
  auto encode_batch = [&](size_t pos) {
    const std::optional<bool> special = batch_special_tokens(requests[order[pos]].context);
    // Rows: the token budget of the longest (first) prompt plus its generation, or batch_size.
    const int64_t P = std::min<int64_t>(lengths[pos] + 2, max_ctx_len);
    const int64_t rows =
        auto_batch_ ? std::max<int64_t>(1, token_budget(P + max_gen) / (P + max_gen))
                    : std::max<int64_t>(1, static_cast<int64_t>(fixed_rows_ * oom_shrink_));
    const size_t end = std::min(order.size(), pos + static_cast<size_t>(rows));
    for (size_t k = pos; k < end; ++k) {
      // Left truncation to max_ctx_len (tok_batch_encode's left_truncate_len).
      std::vector<Token> ids = tokenizer_->encode(requests[order[k]].context, *special);
      if (static_cast<int64_t>(ids.size()) > max_ctx_len)
        ids.erase(ids.begin(), ids.end() - max_ctx_len);
      prompts[k] = std::move(ids);
    }
    return end;
  };
  auto finish = [&](size_t k, std::vector<Token> gen) {
    progress.tokens += static_cast<int64_t>(prompts[k].size() + gen.size());
    out[order[k]] = generation_text(*tokenizer_, std::move(gen), args_.think_end_token, g.until);
    answered(order[k], out[order[k]]);
    ++progress.done;
  };
  if (!model_->batches_continuously()) {
    // Static batches (the transformers path): each runs until its last row ends.
    for (size_t pos = 0; pos < order.size();) {
      const size_t end = encode_batch(pos);
      std::vector<std::vector<Token>> part(prompts.begin() + static_cast<std::ptrdiff_t>(pos),
                                           prompts.begin() + static_cast<std::ptrdiff_t>(end));
      std::vector<std::vector<Token>> gens;
      try {
        gens = model_->generate(part, so, stop);
      } catch (const OutOfMemory& e) {
        if (end - pos <= 1)
          throw RuntimeError(std::string("out of memory generating for one request: ") + e.what());
        oom_shrink_ /= 2;
        log::warn("hf: out of memory; retrying with half the batch");
        continue;
      }
      for (size_t k = pos; k < end; ++k) finish(k, std::move(gens[k - pos]));
      pos = end;
      report(progress.done, progress.total, progress.tokens);
    }
    return;
  }
  for (size_t pos = 0; pos < order.size();) pos = encode_batch(pos);
  // Continuous batching: the rows in the same order, a finished row's slot refilled at once.
  // Slots: batch_size, or as many rows of the longest prompt + max_gen_toks as the token budget
  // holds (shorter rows take the same slots: the budget never comes from max_length).
  std::vector<size_t> left(order.size());
  for (size_t k = 0; k < order.size(); ++k) left[k] = k;
  while (!left.empty()) {
    std::vector<std::vector<Token>> part;
    for (size_t k : left) part.push_back(prompts[k]);
    const int64_t cap = static_cast<int64_t>(part[0].size()) + max_gen;
    Batching b;
    b.share_prefixes = prefix_sharing_;
    if (auto_batch_ && !model_->on_cuda()) {
      // A decoding step feeds one token per slot, so the CPU's slots are bounded by the pool's
      // memory (keys and values of cap tokens each), not by token_budget's tokens per forward
      // pass (which admitted 5 slots for 1,280-token generations of a 260K model).
      const double slots = cpu_budget_bytes() / model_->generation_slot_bytes(cap) * oom_shrink_;
      b.slots = std::clamp<int64_t>(static_cast<int64_t>(slots), 1, args_.max_batch_size);
      b.token_budget = b.slots * cap;
    } else if (auto_batch_) {
      b.token_budget = token_budget(cap);
      b.slots = std::max<int64_t>(1, std::min(args_.max_batch_size, b.token_budget / cap));
    } else {
      b.slots = std::max<int64_t>(1, static_cast<int64_t>(fixed_rows_ * oom_shrink_));
    }
    std::vector<bool> done(left.size(), false);
    b.finished = [&](size_t row, const std::vector<Token>& gen) {
      finish(left[row], gen);
      done[row] = true;
      report(progress.done, progress.total, progress.tokens);
    };
    const StopFn row_stop = [&](size_t row, const std::vector<Token>& gen) {
      return stop(left[row], gen);
    };
    try {
      model_->generate_continuous(part, so, row_stop, b);
      return;
    } catch (const OutOfMemory& e) {
      if (b.slots <= 1 || (b.token_budget > 0 && b.token_budget < 2 * cap))
        throw RuntimeError(std::string("out of memory generating for one request: ") + e.what());
      oom_shrink_ /= 2;
      log::warn("hf: out of memory; retrying with half the batch");
    }
    // The rows that finished before the out-of-memory are kept, not run again.
    std::vector<size_t> still;
    for (size_t i = 0; i < left.size(); ++i)
      if (!done[i]) still.push_back(left[i]);
    left = std::move(still);
  }
}

}  // namespace lmeval::hf

// ---------------------------------------------------------------------------------------------
// Construction (tests, tools, and the plugin entry point)

namespace lmeval {

std::unique_ptr<LM> make_hf_model(const Json& model_args, const ModelOptions& options) {
  hf::HfArgs args = hf::parse_hf_args(model_args, options);
  if (!args.gguf_file.empty()) return std::make_unique<hf::HFLM>(args);  // decoder-only
  // HFLM._get_backend: an encoder-decoder runs through the seq2seq backend (seq2seq_lm.hpp).
  const std::filesystem::path dir =
      hf::model_folder(args.pretrained, args.revision.empty() ? "main" : args.revision,
                       args.subfolder, "pretrained");
  if (auto seq2seq = hf::make_seq2seq_model(args, dir)) return seq2seq;
  return std::make_unique<hf::HFLM>(args);
}

}  // namespace lmeval
