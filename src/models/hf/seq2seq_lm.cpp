// The seq2seq backend of HFLM over EncoderDecoder (reference: lm_eval/models/huggingface.py's
// seq2seq branches of tok_batch_encode, _loglikelihood_tokens, loglikelihood_rolling and
// generate_until, and TemplateLM._encode_pair / loglikelihood in lm_eval/api/model.py).
#include "models/hf/seq2seq_lm.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "lmeval/core/error.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/models/gen_kwargs.hpp"
#include "lmeval/models/rolling_windows.hpp"
#include "lmeval/models/special_tokens.hpp"
#include "models/hf/generation.hpp"
#include "models/hf/json_file.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

bool uses_seq2seq_backend(const HfArgs& args, const fs::path& dir) {
  if (args.backend == "seq2seq") return true;
  if (args.backend == "causal") return false;
  const fs::path p = dir / "config.json";
  if (!fs::exists(p)) return false;  // the decoder-only loader says what is missing
  const Json j = load_json_file(p, "config.json");
  return j.is_object() && j.contains("model_type") && j["model_type"].is_string() &&
         is_seq2seq_model_type(j["model_type"].get<std::string>());
}

std::unique_ptr<LM> make_seq2seq_model(const HfArgs& args, const fs::path& dir) {
  if (!uses_seq2seq_backend(args, dir)) return nullptr;
  return std::make_unique<Seq2SeqLM>(args, dir);
}

Seq2SeqLM::Seq2SeqLM(const HfArgs& args, const fs::path& dir) : args_(args) {
  if (!args.peft.empty() || !args.delta.empty())
    throw UserError(
        std::string(args.peft.empty() ? "delta" : "peft") +
            " is not supported for encoder-decoder (seq2seq) models in lm-eval",
        {dir.string(), 0, 0, args.peft.empty() ? "--model_args delta" : "--model_args peft"},
        "a decoder-only model, or no peft/delta with a seq2seq model");
  model_ = EncoderDecoder::load(dir, hf_load_options(args));
  // HFLM.__init__ calls model.tie_weights() after loading, and transformers 5's T5Config sets
  // tie_word_embeddings=True whatever config.json says: so the reference scores a v1.1 /
  // Flan-T5 checkpoint with its shared embedding as the LM head, its own lm_head.weight unused
  // (docs/fidelity.md). from_pretrained alone keeps that lm_head (EncoderDecoder::load).
  model_->tie_word_embeddings();
  tokenizer_ = load_tokenizer(hf_tokenizer_folder(args, dir));
  const EncoderDecoderConfig& cfg = model_->config();
  // HFLM.max_length (resolve_max_length): T5Config has no n_positions / max_position_embeddings
  // of its own (Hub T5 configs carry n_positions).
  max_length_ = hf_max_length(args, cfg.max_position_embeddings, std::nullopt, *tokenizer_);
  ids_ = hf_token_ids(args, *tokenizer_, dir, cfg.eos_token_id);
  if (!args.batch_size.empty() && args.batch_size.rfind("auto", 0) != 0)
    fixed_rows_ = std::stoll(args.batch_size);
  log::info("hf: loaded " + args.pretrained + " (" + cfg.architecture + ", encoder-decoder, " +
            std::to_string(model_->num_parameters()) + " parameters, " + model_->dtype_name() +
            ", " + (model_->on_cuda() ? "cuda" : "cpu") + "), max_length " +
            std::to_string(max_length_));
}

Json Seq2SeqLM::model_info() const {
  return hf_model_info(model_->num_parameters(), model_->dtype_name(), args_.revision);
}

std::optional<TokenizerInfo> Seq2SeqLM::tokenizer_info() const {
  return hf_tokenizer_info(*tokenizer_, ids_.pad, ids_.eot, max_length_);
}

std::optional<std::string> Seq2SeqLM::chat_template(const std::string& name) const {
  return named_chat_template(*tokenizer_, name);
}

Json Seq2SeqLM::chat_template_variables() const {
  return chat_template_special_tokens(*tokenizer_);
}

Json Seq2SeqLM::performance_stats() const { return phases_.json(); }

std::vector<Token> Seq2SeqLM::tok_encode(const std::string& text,
                                         std::optional<bool> add_special_tokens) const {
  // _add_special_kwargs, then add_special_tokens=False for a text that starts with the prefix
  // token's text (has_bos_prefix): T5's tokenizer otherwise appends </s>.
  return tokenizer_->encode(
      text, hf_add_special_tokens(text, add_special_tokens, args_.add_bos_token, ids_.prefix_text));
}

TokenPair Seq2SeqLM::encode_request(const LoglikelihoodRequest& r) const {
  if (r.context.empty()) {
    // TemplateLM.loglikelihood: the prefix token (T5: </s>, there being no BOS) as the context.
    return empty_context_pair(tok_encode(r.continuation, false), ids_.prefix);
  }
  // _encode_pair: trailing whitespace moves to the continuation; the two are encoded apart (the
  // context with the tokenizer's special tokens, the continuation without).
  const auto [context, continuation] = move_trailing_whitespace(r.context, r.continuation);
  return {tok_encode(context), tok_encode(continuation, false)};
}

std::vector<LoglikelihoodResult> Seq2SeqLM::loglikelihood_tokens(const std::vector<TokenPair>& reqs,
                                                                 const char* phase_name) {
  const auto start = std::chrono::steady_clock::now();
  const bool hand_out = std::string_view(phase_name) == "loglikelihood";
  std::vector<LoglikelihoodResult> results(reqs.size());
  // Rows are independent (right padding, the encoder's padding masked, the decoder causal), so
  // the order decides only speed, not the scores (the reference's _collate orders by length).
  std::vector<size_t> order;
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].second.empty()) {
      results[i] = {0.0, true};  // as the decoder-only backend: nothing to score
      continue;
    }
    check_continuation_length(reqs[i].second.size(), max_length_);
    order.push_back(i);
  }
  // Longest first, and the requests of one context together so that a batch encodes each
  // context once (EncoderDecoder::score).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (reqs[a].first.size() != reqs[b].first.size())
      return reqs[a].first.size() > reqs[b].first.size();
    if (reqs[a].first != reqs[b].first) return reqs[a].first < reqs[b].first;
    return reqs[a].second.size() > reqs[b].second.size();
  });
  const auto L = static_cast<size_t>(max_length_);
  auto tail = [&](const std::vector<Token>& v) {
    // (context_enc)[-max_length:], (continuation_enc)[-max_length:]
    return v.size() > L ? std::vector<Token>(v.end() - static_cast<std::ptrdiff_t>(L), v.end()) : v;
  };
  size_t max_cont = 0;
  for (size_t i : order) max_cont = std::max(max_cont, std::min(reqs[i].second.size(), L));
  Phase& ph = phase(phase_name);
  size_t pos = 0, done = 0;
  while (pos < order.size()) {
    // batch_size N rows; automatic: up to max_batch_size rows and about 8192 tokens.
    const size_t width = std::min(reqs[order[pos]].first.size(), L) + max_cont;
    const size_t cap =
        fixed_rows_ > 0 ? static_cast<size_t>(fixed_rows_)
                        : std::max<size_t>(1, std::min<size_t>(args_.max_batch_size,
                                                               8192 / std::max<size_t>(width, 1)));
    const size_t end = std::min(order.size(), pos + cap);
    std::vector<Seq2SeqRow> rows;
    for (size_t k = pos; k < end; ++k) {
      rows.push_back({tail(reqs[order[k]].first), tail(reqs[order[k]].second)});
      ph.tokens += static_cast<int64_t>(rows.back().encoder.size() + rows.back().targets.size());
    }
    const std::vector<SpanScore> scores = model_->score(rows);
    for (size_t k = pos; k < end; ++k) {
      results[order[k]] = {scores[k - pos].logprob, scores[k - pos].is_greedy};
      if (hand_out) answered(order[k], results[order[k]]);
    }
    done += end - pos;
    pos = end;
    if (progress_) progress_(done, order.size(), ph.tokens);
  }
  ph.requests += reqs.size();
  ph.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return results;
}

std::vector<LoglikelihoodResult> Seq2SeqLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  std::vector<TokenPair> enc;
  enc.reserve(requests.size());
  for (const auto& r : requests) enc.push_back(encode_request(r));
  return loglikelihood_tokens(enc, "loglikelihood");
}

std::vector<double> Seq2SeqLM::loglikelihood_rolling(const std::vector<std::string>& texts) {
  // HFLM.loglikelihood_rolling makes the decoder-only windows for seq2seq too ("we pass single
  // EOT token to the Encoder and the full context to the decoder"): each window's context (the
  // prefix token, or the token before the window) is the encoder's input and its tokens the
  // decoder's targets.
  std::vector<TokenPair> windows;
  std::vector<size_t> owner;
  for (size_t i = 0; i < texts.size(); ++i)
    for (auto& w : rolling_windows(tok_encode(texts[i]), ids_.prefix, max_length_)) {
      windows.push_back(std::move(w));
      owner.push_back(i);
    }
  auto scored = loglikelihood_tokens(windows, "loglikelihood_rolling");
  std::vector<double> out(texts.size(), 0.0);
  for (size_t k = 0; k < windows.size(); ++k) out[owner[k]] += scored[k].loglikelihood;
  return out;
}

// generate_until's batch size: batch_size N, else what the reference's _detect_batch_size finds
// where nothing runs out of memory (max_batch_size): the batch decides the padded encoder
// length, and with it how long a seq2seq generation may run.
int64_t Seq2SeqLM::generation_rows() const {
  return fixed_rows_ > 0 ? fixed_rows_ : args_.max_batch_size;
}

std::vector<std::string> Seq2SeqLM::generate_until(const std::vector<GenerationRequest>& requests) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> out(requests.size());
  const std::string eos_text =
      ids_.eot ? tokenizer_->decode(std::vector<Token>{*ids_.eot}, false) : std::string();
  Phase& ph = phase("generate_until");
  int64_t tokens = 0;
  for (const auto& members : group_by_gen_kwargs(requests)) {
    const Json& kw = requests[members[0]].gen_kwargs;
    const gen_kwargs::HfGenKwargs g =
        gen_kwargs::normalize_for_hf(kw, kHfDefaultMaxGenToks, eos_text);
    std::vector<int64_t> lengths;
    const std::vector<size_t> order = by_context_length(
        requests, members, [this](const std::string& c) { return tok_encode(c); }, lengths);
    const auto rows = static_cast<size_t>(generation_rows());
    for (size_t pos = 0; pos < order.size(); pos += rows) {
      const std::vector<size_t> batch(
          order.begin() + static_cast<std::ptrdiff_t>(pos),
          order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), pos + rows)));
      generate_batch(requests, batch, g, kw, out, tokens);
    }
  }
  ph.requests += requests.size();
  ph.tokens += tokens;
  ph.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

void Seq2SeqLM::generate_batch(const std::vector<GenerationRequest>& requests,
                               const std::vector<size_t>& batch, const gen_kwargs::HfGenKwargs& g,
                               const Json& kw, std::vector<std::string>& out, int64_t& tokens) {
  if (g.max_gen_toks <= 0)
    throw UserError(
        "max_gen_toks " + std::to_string(g.max_gen_toks) + " leaves nothing to generate",
        {"", 0, 0, "max_gen_toks"}, "max_gen_toks of at least 1");
  // tok_batch_encode for seq2seq: the tokenizer's own special tokens (add_bos_token is not read),
  // left-truncated to the encoder's whole max_length.
  std::vector<std::vector<Token>> prompts;
  size_t width = 0;
  for (size_t i : batch) {
    std::vector<Token> ids = tokenizer_->encode(requests[i].context, true);
    if (static_cast<int64_t>(ids.size()) > max_length_)
      ids.erase(ids.begin(), ids.end() - max_length_);
    width = std::max(width, ids.size());
    tokens += static_cast<int64_t>(ids.size());
    prompts.push_back(std::move(ids));
  }
  SamplingOptions so = sampling_options(g, kw, ids_.eos, ids_.pad.value_or(0), args_.seed);
  // generate(max_length = padded context length + max_gen_toks): for an encoder-decoder that
  // bounds the decoder's sequence, start token included, so a seq2seq generation may run past
  // max_gen_toks by the batch's padded context length less one (a max_length in gen_kwargs wins).
  int64_t max_length = static_cast<int64_t>(width) + g.max_gen_toks;
  if (kw.is_object() && kw.contains("max_length") && kw["max_length"].is_number_integer())
    max_length = kw["max_length"].get<int64_t>();
  so.max_new_tokens = max_length - 1;
  const StopFn stop = stop_criteria(*tokenizer_, g.until);
  std::vector<std::vector<Token>> gens = model_->generate(prompts, so, stop);
  for (size_t k = 0; k < batch.size(); ++k) {
    tokens += static_cast<int64_t>(gens[k].size());
    out[batch[k]] =
        generation_text(*tokenizer_, std::move(gens[k]), args_.think_end_token, g.until);
    answered(batch[k], out[batch[k]]);
  }
}

}  // namespace lmeval::hf
