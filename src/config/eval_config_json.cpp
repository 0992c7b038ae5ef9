// EvalConfig <-> JSON, one line per field so a new field is one line in each direction.
#include <type_traits>

#include "lmeval/config/eval_config.hpp"

namespace lmeval {

namespace {

template <class T>
Json put(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}
template <class T>
Json put(const T& v) {
  return Json(v);
}
Json put(const std::vector<std::optional<int64_t>>& v) {
  Json a = Json::array();
  for (const auto& x : v) a.push_back(put(x));
  return a;
}

template <class T>
void get(const Json& j, const char* key, std::optional<T>& v) {
  if (!j.contains(key)) return;
  if (j[key].is_null()) v.reset();
  else v = j[key].get<T>();
}
template <class T>
void get(const Json& j, const char* key, T& v) {
  if (j.contains(key)) v = j[key].get<T>();
}
void get(const Json& j, const char* key, std::vector<std::optional<int64_t>>& v) {
  if (!j.contains(key)) return;
  v.clear();
  for (const auto& x : j[key]) v.push_back(x.is_null() ? std::nullopt : std::optional<int64_t>(x.get<int64_t>()));
}

// The field list, applied with `f(name, field)` for both directions. model_secrets is left out
// on purpose: shard files travel between machines, and merge calls no model.
template <class Cfg, class F>
void fields(Cfg& c, F&& f) {
  f("config", c.config);
  f("tasks", c.tasks);
  f("model", c.model);
  f("model_args", c.model_args);
  f("apply_chat_template", c.apply_chat_template);
  f("limit", c.limit);
  f("use_cache", c.use_cache);
  f("num_fewshot", c.num_fewshot);
  f("batch_size", c.batch_size);
  f("max_batch_size", c.max_batch_size);
  f("device", c.device);
  f("gen_kwargs", c.gen_kwargs);
  f("output_path", c.output_path);
  f("log_samples", c.log_samples);
  f("samples", c.samples);
  f("cache_requests", c.cache_requests);
  f("check_integrity", c.check_integrity);
  f("system_instruction", c.system_instruction);
  f("fewshot_as_multiturn", c.fewshot_as_multiturn);
  f("include_path", c.include_path);
  f("verbosity", c.verbosity);
  f("write_out", c.write_out);
  f("show_config", c.show_config);
  f("predict_only", c.predict_only);
  f("seed", c.seed);
  f("trust_remote_code", c.trust_remote_code);
  f("confirm_run_unsafe_code", c.confirm_run_unsafe_code);
  f("metadata", c.metadata);
  f("bootstrap_iters", c.bootstrap_iters);
  f("data_dir", c.data_dir);
  f("show_ci", c.show_ci);
  f("continuous_metrics", c.continuous_metrics);
  f("shard_index", c.shard_index);
  f("shard_count", c.shard_count);
  f("fewshot_seeds", c.fewshot_seeds);
}

}  // namespace

Json eval_config_to_json(const EvalConfig& cfg) {
  Json j = Json::object();
  fields(cfg, [&](const char* name, const auto& v) { j[name] = put(v); });
  return j;
}

EvalConfig eval_config_from_json(const Json& j) {
  EvalConfig cfg;
  fields(cfg, [&](const char* name, auto& v) { get(j, name, v); });
  return cfg;
}

}  // namespace lmeval
