// PythonModel: the transformers path of the hf backend (python_model.hpp).
#include "models/hf/python_model.hpp"

#include <algorithm>

#include "lmeval/core/embedded_python.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/stop_signal.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

namespace {

// The model_args as the reference's HFLM receives them, for transformers_model.py: pretrained is
// the resolved local folder (a Hub id fetched by lm-eval's own client, subfolder applied).
Json model_args_of(const fs::path& dir, const HfArgs& a) {
  Json m = Json::object();
  m["pretrained"] = dir.string();
  m["revision"] = a.revision.empty() ? "main" : a.revision;
  m["trust_remote_code"] = a.trust_remote_code;
  m["dtype"] = a.dtype.empty() ? "auto" : a.dtype;
  m["parallelize"] = a.parallelize;
  if (!a.peft.empty()) m["peft"] = a.peft;
  if (!a.delta.empty()) m["delta"] = a.delta;
  if (!a.gguf_file.empty()) m["gguf_file"] = a.gguf_file;
  for (const auto& [k, v] : a.transformers_kwargs.items()) m[k] = v;
  return m;
}

std::string install_hint(const std::string& interpreter) {
  return "install them into that environment (" + interpreter +
         "): pip install torch transformers (CPU only: pip install torch --index-url "
         "https://download.pytorch.org/whl/cpu), plus peft for peft=, accelerate for "
         "parallelize=True and bitsandbytes for load_in_4bit/load_in_8bit";
}

bool stop_trampoline(void* ctx, std::size_t row, const std::int32_t* tokens, std::size_t n) {
  const StopFn& stop = *static_cast<const StopFn*>(ctx);
  return stop(row, std::vector<Token>(tokens, tokens + n));
}

}  // namespace

std::unique_ptr<PythonModel> PythonModel::load(const fs::path& dir, const HfArgs& args,
                                               const std::string& why, int64_t tokenizer_size) {
  const SourceLocation where{"", 0, 0, "--model_args pretrained"};
  const std::string needs = args.pretrained + " runs through transformers (" + why + ")";
  const EmbeddedPython& py = embedded_python();
  if (!py.api)
    throw UserError(needs + ", which needs Python: " + py.failure, where,
                    "an active Python environment with torch and transformers");
  Json spec = Json::object();
  spec["model_args"] = model_args_of(dir, args);
  spec["device"] = args.device;
  spec["softmax_dtype"] = args.softmax_dtype;
  if (args.seed) spec["seed"] = *args.seed;
  spec["tokenizer_size"] = tokenizer_size;
  auto m = std::unique_ptr<PythonModel>(new PythonModel());
  m->api_ = py.api;
  m->interpreter_ = py.described;
  std::string error;
  {
    // Loading a large model takes long: no time limit, but a crash or a stop names it.
    GuardedCall guard("transformers building " + args.pretrained, 0);
    m->handle_ = py.api->transformers_model(&spec, &m->info_, &error);
  }
  throw_if_stopped();
  if (!m->handle_) {
    const std::string missing = kPythonMissingPackages;
    if (error.rfind(missing, 0) == 0) {
      const std::string what = error.substr(missing.size());
      // transformers_model.py asks for peft alone once torch and transformers are there.
      if (what.rfind("peft", 0) == 0)
        throw UserError(needs + ", and " + py.described + " lacks " + what +
                            ": install it into that environment: pip install peft",
                        {"", 0, 0, "--model_args peft"}, "peft in the active Python environment");
      throw UserError(
          needs + ", and " + py.described + " lacks " + what + ": " + install_hint(py.described),
          where, "torch and transformers in the active Python environment");
    }
    throw UserError(needs + ", and building it there raised " + error, where,
                    "a model transformers can load with these model_args");
  }
  const Json& info = m->info_;
  auto int_or = [&](const char* key) -> std::optional<int64_t> {
    if (info.contains(key) && info[key].is_number_integer()) return info[key].get<int64_t>();
    return std::nullopt;
  };
  m->cfg_.architecture = info.value("architecture", "");
  m->cfg_.model_type = info.contains("model_type") && info["model_type"].is_string()
                           ? info["model_type"].get<std::string>()
                           : "";
  m->cfg_.vocab_size = int_or("vocab_size").value_or(0);
  m->cfg_.max_position_embeddings = int_or("max_length");
  m->cfg_.eos_token_id = int_or("eos_token_id");
  m->n_params_ = int_or("num_parameters").value_or(0);
  m->dtype_ = info.value("dtype", "");
  m->cuda_ = info.value("device", "").rfind("cuda", 0) == 0;
  return m;
}

Json PythonModel::call(const char* method, const Json& kwargs, const StopFn* stop) {
  Json out;
  std::string error;
  bool ok;
  {
    GuardedCall guard(std::string("transformers' ") + method + " of " + cfg_.architecture, 0);
    ok = api_->transformers_call(handle_, method, &kwargs, stop ? stop_trampoline : nullptr,
                                 const_cast<StopFn*>(stop), &out, &error);
  }
  throw_if_stopped();
  if (!ok) {
    if (error.find("out of memory") != std::string::npos) throw OutOfMemory(error);
    throw RuntimeError("the transformers model (" + cfg_.architecture + ") raised in " + method +
                       ": " + error);
  }
  return out;
}

std::vector<std::vector<SpanScore>> PythonModel::score(const std::vector<ScoreRow>& rows) {
  if (rows.empty()) return {};
  Json jrows = Json::array();
  for (const auto& r : rows) {
    Json spans = Json::array();
    for (const auto& s : r.spans) spans.push_back(Json::array({s.first, s.targets}));
    jrows.push_back({{"tokens", r.tokens}, {"spans", std::move(spans)}});
  }
  const Json out = call("score", {{"rows", std::move(jrows)}});
  std::vector<std::vector<SpanScore>> scores(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (const auto& s : out.at(i))
      scores[i].push_back({s.at(0).get<double>(), s.at(1).get<bool>()});
  return scores;
}

std::vector<std::vector<std::vector<SpanScore>>> PythonModel::score_trees(
    const std::vector<ScoreTree>& trees) {
  std::vector<ScoreRow> rows;
  for (const auto& t : trees)
    for (const auto& b : t.branches) {
      ScoreRow r{t.prefix, b.spans};
      r.tokens.insert(r.tokens.end(), b.tokens.begin(), b.tokens.end());
      rows.push_back(std::move(r));
    }
  auto flat = score(rows);
  std::vector<std::vector<std::vector<SpanScore>>> out(trees.size());
  size_t k = 0;
  for (size_t i = 0; i < trees.size(); ++i)
    for (size_t b = 0; b < trees[i].branches.size(); ++b) out[i].push_back(std::move(flat[k++]));
  return out;
}

std::vector<std::vector<Token>> PythonModel::generate(
    const std::vector<std::vector<Token>>& prompts, const SamplingOptions& o, const StopFn& stop) {
  if (prompts.empty()) return {};
  Json kw = {{"prompts", prompts},
             {"max_new_tokens", o.max_new_tokens},
             {"pad_id", o.pad_id},
             {"eos_ids", o.eos_ids},
             {"do_sample", o.do_sample},
             {"temperature", o.temperature},
             // Unset in lm-eval's options is 1.0 / 0: passed only when a task set them, so the
             // model's generation_config decides otherwise, as when HFLM passes none.
             {"top_p", o.top_p < 1.0 ? Json(o.top_p) : Json()},
             {"top_k", o.top_k > 0 ? Json(o.top_k) : Json()}};
  const Json out = call("generate", kw, &stop);
  std::vector<std::vector<Token>> gens;
  gens.reserve(out.size());
  for (const auto& row : out) gens.push_back(row.get<std::vector<Token>>());
  return gens;
}

double PythonModel::activation_bytes_per_token(int64_t length) const {
  // The full [rows x length x vocab] logits in float32 and their log-softmax (_model_call keeps
  // them whole), plus a margin for the hidden states.
  (void)length;
  return 2.0 * 4.0 * static_cast<double>(std::max<int64_t>(cfg_.vocab_size, 1)) * 1.5;
}

}  // namespace lmeval::hf
