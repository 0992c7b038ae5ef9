#include "run_manifest.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/data/hub_client.hpp"

namespace lmeval {

namespace {

namespace fs = std::filesystem;

// Where the tokenizer's files are on this machine: a local folder as given, else, for a Hub id,
// the snapshot of `revision` in the Hugging Face cache (where the backends fetched them; only read
// here, never downloaded). `commit` is set for a snapshot.
std::optional<fs::path> tokenizer_dir(const std::string& source, const std::string& revision,
                                      std::string& commit) {
  std::error_code ec;
  if (source.empty()) return std::nullopt;
  if (fs::is_directory(source, ec)) return fs::path(source);
  if (source.front() == '/' || source.front() == '.' ||
      std::count(source.begin(), source.end(), '/') > 1)
    return std::nullopt;
  hub::HubClient client(hub::HubConfig::from_env());
  hub::RepoRef repo{hub::RepoType::kModel, source, revision.empty() ? "main" : revision};
  auto c = client.cached_commit(repo);
  if (!c) return std::nullopt;
  commit = *c;
  return client.snapshot_dir(repo, *c);
}

// The tokenizer's files in `dir`, hashed together (name and bytes of each, in name order); null
// when none is there (no local copy, or a model without a tokenizer).
Json tokenizer_files_sha256(const std::optional<fs::path>& dir) {
  static const char* names[] = {"added_tokens.json", "merges.txt",      "special_tokens_map.json",
                                "tokenizer.json",    "tokenizer.model", "tokenizer_config.json",
                                "vocab.json"};
  if (!dir) return Json();
  Sha256 h;
  bool any = false;
  for (const char* n : names) {
    fs::path p = *dir / n;
    std::ifstream in(p, std::ios::binary);  // follows the snapshot's links into blobs/
    if (!in) continue;
    std::ostringstream bytes;
    bytes << in.rdbuf();
    h.update(n);
    h.update(std::string_view("\0", 1));
    h.update(bytes.str());
    any = true;
  }
  return any ? Json(h.hexdigest()) : Json();
}

std::string model_arg(const Json& args, const std::string& key) {
  if (!args.is_object() || !args.contains(key)) return "";
  const Json& v = args[key];
  return v.is_string() ? v.get<std::string>() : py::str(v);
}

}  // namespace

Json run_manifest(const std::vector<TaskOutcome>& outcomes, const Json& results_file,
                  const EvalConfig& cfg) {
  Json m = Json::object();
  m["lm_eval_version"] = results_file.value("lm_eval_version", Json());
  // Tokenizer: its files (local folders), the special tokens the backend reported, and the BOS
  // policy: add_bos_token from model_args, else the tokenizer's own post-processor decides.
  std::string source = model_arg(cfg.model_args, "tokenizer");
  if (source.empty()) source = model_arg(cfg.model_args, "pretrained");
  Json tok = Json::object();
  tok["source"] = source.empty() ? Json() : Json(source);
  const std::string revision = model_arg(cfg.model_args, "revision");
  tok["revision"] = revision.empty() ? Json() : Json(revision);
  std::string commit;
  tok["files_sha256"] = tokenizer_files_sha256(tokenizer_dir(source, revision, commit));
  tok["hub_commit"] = commit.empty() ? Json() : Json(commit);
  for (const char* k : {"tokenizer_bos_token", "tokenizer_eos_token", "tokenizer_pad_token"})
    tok[std::string(k).substr(10)] = results_file.value(k, Json());
  m["tokenizer"] = tok;
  const std::string bos = model_arg(cfg.model_args, "add_bos_token");
  m["bos_policy"] = bos.empty() ? std::string("tokenizer_default") : "add_bos_token=" + bos;
  m["chat_template_sha256"] = results_file.value("chat_template_sha", Json());
  m["system_instruction_sha256"] = results_file.value("system_instruction_sha", Json());
  m["fewshot_as_multiturn"] = results_file.value("fewshot_as_multiturn", Json());
  m["gen_kwargs_sha256"] = sha256_hex(cfg.gen_kwargs.dump());
  Json tasks = Json::object();
  std::vector<const TaskOutcome*> sorted;
  for (const auto& r : outcomes) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](const TaskOutcome* a, const TaskOutcome* b) {
    return a->task().name() < b->task().name();
  });
  for (const auto* r : sorted) {
    const std::string& name = r->task().name();
    Json t = Json::object();
    t["version"] = r->task().version();
    t["num_fewshot"] = r->task().num_fewshot();
    const Json& configs = results_file["configs"];
    t["config_sha256"] = configs.contains(name) ? Json(sha256_hex(configs[name].dump())) : Json();
    // Every request's arguments (prompt and continuation, or prompt and generation settings),
    // in request order: any change to a rendered prompt changes it.
    Sha256 h;
    for (const auto& in : r->requests->instances) {
      h.update(in.arguments.dump());
      h.update("\n");
    }
    t["prompts_sha256"] = h.hexdigest();
    t["n_requests"] = r->requests->instances.size();
    t["n_docs"] = r->plan->doc_positions.size();
    tasks[name] = t;
  }
  m["tasks"] = tasks;
  return m;
}

}  // namespace lmeval
