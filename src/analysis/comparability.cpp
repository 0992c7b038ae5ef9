// Prompt-level identity of two runs and the settings that explain score differences.
#include "lmeval/analysis/comparability.hpp"

#include <algorithm>
#include <set>

#include "lmeval/core/error.hpp"

namespace lmeval::analysis {

namespace {

std::string show(const Json& v) {
  std::string s = v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

const Json& at_or_null(const Json& obj, const std::string& key) {
  static const Json null;
  return obj.is_object() && obj.contains(key) ? obj[key] : null;
}

// A task config without its metadata: the run merges model_args and the file it was read from into
// metadata, neither of which changes a prompt (the version is compared on its own).
Json comparable_config(const Json& config) {
  Json c = config;
  if (c.is_object()) c.erase("metadata");
  return c;
}

// Leaf values of a JSON object as "a.b.c" -> value.
void flatten(const Json& v, const std::string& prefix, std::map<std::string, Json>& out) {
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out[prefix] = v;
  }
}

}  // namespace

std::vector<std::string> prompt_differences(const Run& a, const Run& b, const std::string& task,
                                            bool common_items) {
  std::vector<std::string> out;
  for (const char* section : {"versions", "n-shot"}) {
    const Json& va = at_or_null(at_or_null(a.results, section), task);
    const Json& vb = at_or_null(at_or_null(b.results, section), task);
    if (va != vb)
      out.push_back(std::string(section == std::string("n-shot") ? "num_fewshot" : "task version") +
                    ": " + show(va) + " vs " + show(vb));
  }
  std::map<std::string, Json> ca, cb;
  flatten(comparable_config(at_or_null(a.results["configs"], task)), "", ca);
  flatten(comparable_config(at_or_null(b.results["configs"], task)), "", cb);
  std::set<std::string> keys;
  for (const auto& [k, v] : ca) keys.insert(k);
  for (const auto& [k, v] : cb) keys.insert(k);
  for (const auto& k : keys) {
    const Json va = ca.count(k) ? ca[k] : Json();
    const Json vb = cb.count(k) ? cb[k] : Json();
    if (va != vb) out.push_back("task config '" + k + "': " + show(va) + " vs " + show(vb));
  }
  // Per-task manifest hashes, when the runs carry them.
  const Json& ma = at_or_null(at_or_null(at_or_null(a.results, "manifest"), "tasks"), task);
  const Json& mb = at_or_null(at_or_null(at_or_null(b.results, "manifest"), "tasks"), task);
  // With --common_items the manifest's prompt hashes (over every request) differ whenever the
  // document sets do; the per-document prompt hashes below decide instead.
  if (ma.is_object() && mb.is_object() && !common_items) {
    std::map<std::string, Json> fa, fb;
    flatten(ma, "", fa);
    flatten(mb, "", fb);
    for (const auto& [k, v] : fa)
      if (fb.count(k) && fb[k] != v && k.find("prompt") != std::string::npos)
        out.push_back("manifest " + k + ": " + show(v) + " vs " + show(fb[k]));
  }
  auto sa = a.samples.find(task), sb = b.samples.find(task);
  if (sa == a.samples.end() || sb == b.samples.end()) return out;
  const TaskSamples& ta = sa->second;
  const TaskSamples& tb = sb->second;
  std::size_t only_a = 0, only_b = 0, prompt_diff = 0;
  std::string first_only_a, first_only_b, first_prompt;
  for (const auto& item : ta.items) {
    auto it = tb.index.find(item.key);
    if (it == tb.index.end()) {
      if (only_a++ == 0) first_only_a = "doc_id " + std::to_string(item.doc_id);
    } else if (tb.items[it->second].prompt_hashes != item.prompt_hashes) {
      if (prompt_diff++ == 0) first_prompt = "doc_id " + std::to_string(item.doc_id);
    }
  }
  for (const auto& item : tb.items)
    if (!ta.index.count(item.key) && only_b++ == 0)
      first_only_b = "doc_id " + std::to_string(item.doc_id);
  if ((only_a || only_b) && !common_items)
    out.push_back("document hashes: " + std::to_string(only_a) + " documents only in " + a.label +
                  (only_a ? " (first: " + first_only_a + ")" : "") + ", " + std::to_string(only_b) +
                  " only in " + b.label + (only_b ? " (first: " + first_only_b + ")" : ""));
  if (common_items && only_a + only_b > 0 && only_a == ta.items.size())
    out.emplace_back("document hashes: no document in common");
  if (prompt_diff)
    out.push_back("prompt hashes: " + std::to_string(prompt_diff) +
                  " of the common documents have different prompts (first: " + first_prompt + ")");
  return out;
}

std::vector<std::string> setting_differences(const Run& a, const Run& b) {
  std::vector<std::string> out;
  auto check = [&](const std::string& name, const Json& va, const Json& vb) {
    if (va != vb) out.push_back(name + ": " + show(va) + " vs " + show(vb));
  };
  const Json& ca = at_or_null(a.results, "config");
  const Json& cb = at_or_null(b.results, "config");
  for (const char* k :
       {"model", "model_args", "gen_kwargs", "limit", "fewshot_seed", "random_seed"})
    check(std::string("config.") + k, at_or_null(ca, k), at_or_null(cb, k));
  for (const char* k :
       {"model_name", "model_dtype", "tokenizer_bos_token", "tokenizer_eos_token", "max_length",
        "chat_template_sha", "system_instruction_sha", "fewshot_as_multiturn"})
    check(k, at_or_null(a.results, k), at_or_null(b.results, k));
  std::map<std::string, Json> ma, mb;
  flatten(at_or_null(a.results, "manifest"), "", ma);
  flatten(at_or_null(b.results, "manifest"), "", mb);
  for (const auto& [k, v] : ma) {
    // A task's config hash covers its metadata, into which each run merges its model_args; the
    // configs themselves were found equal by the prompt check, so that hash says nothing here.
    if (k.ends_with("config_sha256")) continue;
    if (!k.empty() && mb.count(k) && mb[k] != v)
      out.push_back("manifest " + k + ": " + show(v) + " vs " + show(mb[k]));
  }
  return out;
}

std::vector<std::string> common_tasks(const Run& a, const Run& b) {
  std::vector<std::string> ta = a.tasks(), tb = b.tasks(), out;
  for (const auto& t : ta)
    if (std::find(tb.begin(), tb.end(), t) != tb.end()) out.push_back(t);
  if (out.empty()) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s.empty() ? std::string("(none)") : s;
    };
    throw UserError("the runs share no task: " + a.label + " has " + join(ta) + "; " + b.label +
                        " has " + join(tb),
                    {b.results_file.string(), 0, 0, "configs"}, "runs of the same tasks");
  }
  return out;
}

std::vector<std::string> dropped_documents(const Run& a, const Run& b,
                                           const std::vector<std::string>& tasks) {
  std::vector<std::string> out;
  for (const auto& t : tasks) {
    auto sa = a.samples.find(t), sb = b.samples.find(t);
    if (sa == a.samples.end() || sb == b.samples.end()) continue;
    std::size_t common = 0;
    for (const auto& item : sa->second.items) common += sb->second.index.count(item.key);
    const std::size_t only_a = sa->second.items.size() - common,
                      only_b = sb->second.items.size() - common;
    if (only_a || only_b)
      out.push_back(t + ": compared on the " + std::to_string(common) +
                    " documents both runs answered; left out " + std::to_string(only_a) +
                    " only in " + a.label + " and " + std::to_string(only_b) + " only in " +
                    b.label);
  }
  return out;
}

void require_same_prompts(const Run& a, const Run& b, const std::vector<std::string>& tasks,
                          bool common_items) {
  std::string all;
  for (const auto& t : tasks) {
    auto diffs = prompt_differences(a, b, t, common_items);
    for (const auto& d : diffs) all += "\n  " + t + ": " + d;
  }
  if (!all.empty())
    throw UserError(
        "the runs did not ask the same questions, so their scores are not comparable (" + a.source +
            " vs " + b.source + "):" + all,
        {b.results_file.string(), 0, 0, ""},
        common_items ? "runs with identical task versions, few-shot counts, configs and prompts"
                     : "runs with identical task versions, few-shot counts, configs and documents "
                       "(--common_items compares the documents both answered)");
}

}  // namespace lmeval::analysis
