// EvalConfig <-> JSON (a shard's partial file): the fields the run flag table records.
#include "lmeval/config/eval_config.hpp"
#include "lmeval/config/run_options.hpp"

namespace lmeval {

// model_secrets is left out on purpose (it is no flag): shard files travel between machines, and
// merge calls no model.
Json eval_config_to_json(const EvalConfig& cfg) {
  Json j = Json::object();
  for (const auto& o : run_options())
    if (o.to_json) o.to_json(cfg, j);
  return j;
}

EvalConfig eval_config_from_json(const Json& j) {
  EvalConfig cfg;
  for (const auto& o : run_options())
    if (o.from_json) o.from_json(cfg, j);
  return cfg;
}

}  // namespace lmeval
