// The per-phase throughput both hf backends report as performance_stats: one entry per request
// type (loglikelihood, loglikelihood_rolling, generate_until), in the order they first ran.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lmeval/models/lm.hpp"

namespace lmeval::hf {

struct PhaseStats {
  std::string name;
  size_t requests = 0;
  int64_t tokens = 0;
  double seconds = 0;
  int64_t fed_tokens = 0;        // after prefix sharing (the causal backend)
  int64_t max_batch_tokens = 0;  // largest batch fed (the causal backend)
};

class PhaseTable {
 public:
  // The phase called `name`, made empty on first use.
  PhaseStats& get(const std::string& name);
  void clear() { phases_.clear(); }
  // {name: {requests, tokens, seconds, tokens_per_second}}.
  Json json() const;

 private:
  std::vector<PhaseStats> phases_;
};

}  // namespace lmeval::hf
