// Instance: one request of one document (the reference's lm_eval.api.instance.Instance).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

struct Instance {
  std::string request_type;  // loglikelihood | loglikelihood_rolling | generate_until
  size_t task_index = 0;     // position of the task in the run
  std::string task_name;
  size_t doc_pos = 0;  // position among the task's evaluated documents
  int64_t doc_id = 0;  // as reported in samples
  int idx = 0;
  int repeats = 1;
  Json arguments = Json::array();              // [ctx, cont] | [text] | [ctx, gen_kwargs]
  Json resps = Json::array();                  // `repeats` raw responses
  std::map<std::string, Json> filtered_resps;  // per filter pipeline
};

}  // namespace lmeval
