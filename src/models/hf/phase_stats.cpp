// The hf backends' per-phase throughput (phase_stats.hpp).
#include "models/hf/phase_stats.hpp"

namespace lmeval::hf {

PhaseStats& PhaseTable::get(const std::string& name) {
  for (auto& p : phases_)
    if (p.name == name) return p;
  phases_.push_back({name});
  return phases_.back();
}

Json PhaseTable::json() const {
  Json j = Json::object();
  for (const auto& p : phases_) {
    Json e = Json::object();
    e["requests"] = p.requests;
    e["tokens"] = p.tokens;
    e["seconds"] = p.seconds;
    e["tokens_per_second"] = p.seconds > 0 ? static_cast<double>(p.tokens) / p.seconds : 0.0;
    j[p.name] = e;
  }
  return j;
}

}  // namespace lmeval::hf
