// One run per LoRA adapter (see adapter_runs.hpp).
#include "lmeval/config/adapter_runs.hpp"

#include <string>

#include "lmeval/core/error.hpp"

namespace lmeval {

namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t'\"");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t'\"");
  return s.substr(b, e - b + 1);
}

// The adapters model_args.peft names: a list, or the text `[a, b]` (the reference's key=value
// splitter keeps brackets whole, and an unquoted list stays text).
std::vector<Json> adapters_of(const Json& peft) {
  if (peft.is_array()) return {peft.begin(), peft.end()};
  if (peft.is_string()) {
    const std::string& s = peft.get_ref<const std::string&>();
    if (s.size() >= 2 && s.front() == '[' && s.back() == ']') {
      std::vector<Json> out;
      std::string inner = s.substr(1, s.size() - 2);
      size_t start = 0;
      while (start <= inner.size()) {
        size_t comma = inner.find(',', start);
        if (comma == std::string::npos) comma = inner.size();
        out.emplace_back(trimmed(inner.substr(start, comma - start)));
        start = comma + 1;
      }
      return out;
    }
  }
  return {peft};
}

}  // namespace

std::vector<EvalConfig> adapter_runs(const EvalConfig& cfg) {
  if (!cfg.model_args.is_object() || !cfg.model_args.contains("peft")) return {cfg};
  const std::vector<Json> adapters = adapters_of(cfg.model_args["peft"]);
  if (adapters.size() == 1 && !cfg.model_args["peft"].is_array()) return {cfg};
  std::vector<EvalConfig> runs;
  for (size_t i = 0; i < adapters.size(); ++i) {
    const Json& a = adapters[i];
    if (!a.is_string() || a.get_ref<const std::string&>().empty())
      throw UserError("adapter " + std::to_string(i + 1) + " of peft is " +
                          (a.is_string() ? std::string("empty") : a.dump()),
                      {"", 0, 0, "--model_args peft"},
                      "a LoRA adapter folder or Hub repo id per entry (peft=a,b or peft=[a,b])");
    EvalConfig run = cfg;
    run.model_args["peft"] = a;
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace lmeval
